"""The reference values and partials of the rules' vectorised kernels (`rules/slices.rs`), to
200 bits, rounded to the nearest f64.

Run from this folder, `python3 slices.py > slices.csv` (mpmath 1.3); the test
`tests/accuracy.rs` reads the table. Each row is `rule,x,value,partial`, every number written
so that it reads back exactly, mpmath computing with the exact binary value of x.
"""

import math
import mpmath as mp

mp.mp.prec = 200


def f64(v):
    """The f64 nearest to an mpmath number (mpmath rounds to nearest), written exactly."""
    return repr(float(v))


def points():
    """Both signs of: a log-spaced sweep from 1e-300 to 710 (subnormal inputs too), a fine
    linear sweep over [0, 25] where tanh bends and saturates, the neighbourhoods of the
    kernel's range-reduction steps (multiples of ln 2 / 2) and of the underflow of the
    derivative near 372, and the largest doubles."""
    xs = {5e-324, 1e-310, 0.0}
    xs |= {10.0 ** (k / 2.0) for k in range(-600, 6)}
    xs |= {k / 16.0 + 1 / 1024 for k in range(0, 400)}
    xs |= {j * math.log(2) / 2 for j in range(1, 60)}
    xs |= {350.0 + k / 2 for k in range(0, 50)}
    xs |= {700.0, 710.0, 1e300, 1.7976931348623157e308}
    return sorted({s * x for x in xs for s in (1.0, -1.0)})


print("# rule,x,value,partial: see slices.py")
for x in points():
    X = mp.mpf(x)
    print(f"tanh,{f64(x)},{f64(mp.tanh(X))},{f64(1 / mp.cosh(X) ** 2)}")
