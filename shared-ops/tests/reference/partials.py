"""The reference partials of the rule table, to 200 bits, rounded to the nearest f64.

Run from this folder, `python3 partials.py > partials.csv` (mpmath 1.3); the test
`tests/accuracy.rs` reads the table. Each row is `rule,inputs…,partials…`: every input is an
f64 written so that it reads back exactly, and mpmath computes with that exact binary value.
"""

import math
import mpmath as mp

mp.mp.prec = 200


def f64(v):
    """The f64 nearest to an mpmath number (mpmath rounds to nearest), written exactly."""
    return repr(float(v))


def near(c, signs=(-1, 1), ks=range(1, 16)):
    """c ± 10⁻ᵏ: points approaching an edge of a domain or a cancellation."""
    return [c + s * 10.0 ** -k for s in signs for k in ks]


POS = [1e-300, 1e-100, 1e-20, 1e-8, 0.001, 0.1, 0.3, 0.5, 0.7, 1.0, 1.5, 2.0, 3.7, 10.0,
       123.456, 1e5, 1e10, 1e20, 1e100, 1e154, 1e155, 1e200, 1e300, 1.7e308]
SIGNED = sorted(POS + [-p for p in POS])
EXPONENT = [-700.0, -500.0, -100.0, -40.0, -20.0, -5.0, -1.0, -0.5, -1e-5, -1e-20, 0.0, 1e-20,
            1e-5, 0.5, 1.0, 5.0, 20.0, 40.0, 100.0, 500.0, 700.0]
SATURATING = sorted(set(EXPONENT + [-60.0, -30.0, -19.0, -18.0, -10.0, -3.0, -2.0, -0.2,
                                    0.2, 2.0, 3.0, 10.0, 18.0, 19.0, 30.0, 60.0, 300.0, -300.0]))
UNIT = sorted(set([x for x in near(1.0, (-1,)) + near(-1.0, (1,))] +
                  [-0.9, -0.5, -0.1, -1e-10, 0.0, 1e-10, 0.1, 0.5, 0.9]))

UNARY = {
    # name: (points, the exact derivative)
    "recip": (SIGNED, lambda x: -1 / x ** 2),
    "sqrt": (POS, lambda x: 1 / (2 * mp.sqrt(x))),
    "cbrt": (SIGNED, lambda x: 1 / (3 * mp.cbrt(x) ** 2) if x > 0 else 1 / (3 * mp.cbrt(-x) ** 2)),
    "exp": (EXPONENT, mp.exp),
    "exp2": (EXPONENT, lambda x: mp.power(2, x) * mp.log(2)),
    "exp_m1": (EXPONENT, mp.exp),
    "ln": (POS + near(1.0), lambda x: 1 / x),
    "log2": (POS + near(1.0), lambda x: 1 / (x * mp.log(2))),
    "log10": (POS + near(1.0), lambda x: 1 / (x * mp.log(10))),
    "ln_1p": ([p for p in SIGNED if p > -1] + near(-1.0, (1,)), lambda x: 1 / (1 + x)),
    "sin": (EXPONENT, mp.cos),
    "cos": (EXPONENT, lambda x: -mp.sin(x)),
    "tan": ([x for x in SIGNED if abs(x) < 1e5] + near(math.pi / 2, (-1,), range(1, 9)),
            lambda x: 1 / mp.cos(x) ** 2),
    "asin": (UNIT, lambda x: 1 / mp.sqrt(1 - x ** 2)),
    "acos": (UNIT, lambda x: -1 / mp.sqrt(1 - x ** 2)),
    "atan": (SIGNED, lambda x: 1 / (1 + x ** 2)),
    "sinh": (EXPONENT, mp.cosh),
    "cosh": (EXPONENT, mp.sinh),
    "tanh": (SATURATING, lambda x: 1 / mp.cosh(x) ** 2),
    "asinh": (SIGNED, lambda x: 1 / mp.sqrt(1 + x ** 2)),
    "acosh": ([x for x in POS if x > 1] + near(1.0, (1,)) + [1.5, 2.0], lambda x: 1 / mp.sqrt(x ** 2 - 1)),
    "atanh": (UNIT, lambda x: 1 / (1 - x ** 2)),
    "sigmoid": (SATURATING, lambda x: mp.exp(-x) / (1 + mp.exp(-x)) ** 2),
}

for n in [-3, -1, 2, 3, 5, 10]:
    UNARY[f"powi{n}"] = ([x for x in SIGNED if 1e-30 < abs(x) < 1e30],
                         lambda x, n=n: n * mp.power(x, n - 1))

PAIRS = [(a, b) for a in [1e-300, 1e-20, 0.3, 1.0, 2.5, 1e20, 1e300]
         for b in [1e-300, 1e-20, 0.7, 1.0, 4.0, 1e20, 1e300]]
SIGNED_PAIRS = [(sa * a, sb * b) for (a, b) in PAIRS for sa in (1, -1) for sb in (1, -1)]

BINARY = {
    # name: (points, ∂/∂a, ∂/∂b)
    "div": (SIGNED_PAIRS, lambda a, b: 1 / b, lambda a, b: -a / b ** 2),
    "powf": ([(a, b) for a in [1e-10, 0.3, 0.9, 1.0, 1.1, 2.5, 10.0, 1e10]
              for b in [-50.0, -3.5, -1.0, -0.5, 0.25, 0.5, 1.0, 2.0, 3.5, 50.0]
              if abs(b * math.log(a)) < 700],
             lambda a, b: b * mp.power(a, b - 1), lambda a, b: mp.power(a, b) * mp.log(a)),
    "log": ([(a, b) for (a, b) in PAIRS if b != 1.0],
            lambda a, b: 1 / (a * mp.log(b)), lambda a, b: -mp.log(a) / (b * mp.log(b) ** 2)),
    "atan2": (SIGNED_PAIRS, lambda a, b: b / (a ** 2 + b ** 2), lambda a, b: -a / (a ** 2 + b ** 2)),
    "hypot": (SIGNED_PAIRS, lambda a, b: a / mp.sqrt(a ** 2 + b ** 2),
              lambda a, b: b / mp.sqrt(a ** 2 + b ** 2)),
}

print("# rule,inputs…,partials…: see partials.py")
for name, (points, d) in UNARY.items():
    for x in points:
        print(f"{name},{f64(x)},{f64(d(mp.mpf(x)))}")
for name, (points, da, db) in BINARY.items():
    for a, b in points:
        A, B = mp.mpf(a), mp.mpf(b)
        print(f"{name},{f64(a)},{f64(b)},{f64(da(A, B))},{f64(db(A, B))}")
