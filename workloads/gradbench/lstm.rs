use super::{Nary, Reduce, c};
use crate::{Function, Op};
use shared_ops::num_traits::Float;

/// GradBench `lstm`: the loss of ADBench's LSTM with diagonal weights over a character
/// sequence, as a function of every parameter.
///
/// The model has `l` layers of `b` hidden units. At each of the first `c − 1` characters the
/// network predicts the next one; the loss is minus the mean over the sequence's bits of the
/// bit times the log-softmax of the prediction, where the softmax's normaliser keeps ADBench's
/// quirk, `log(Σ exp yᵢ + 2)`. The inputs are `main_params` (per layer a row of weights and a
/// row of biases, each `[forget, ingate, outgate, change]`) then `extra_params` (the input
/// weights, output weights and output biases): `8lb + 3b` numbers. The initial state (per layer
/// a hidden row and a cell row) and the sequence are constant data; the state evolves over the
/// sequence from a fresh copy at each evaluation.
///
/// ```
/// use workloads::{Function, gradbench::Lstm};
/// let f = Lstm::new(2, 3, 5);
/// let p = f.input();
/// assert_eq!(p.len(), 8 * 2 * 3 + 3 * 3);
/// let (_, g) = jacobian::gradient(&f, &p)?;
/// let fwd = jacobian::jacobian_with(&f, &p, jacobian::Mode::Forward)?;
/// workloads::assert_close(&g, fwd.matrix.as_slice(), 1e-12, "lstm");
/// # Ok::<(), jacobian::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Lstm {
    /// `l`, the number of layers.
    pub layers: usize,
    /// `b`, the hidden units of a layer (the bits of a character).
    pub bits: usize,
    /// The initial state, `2l` rows of `b`: per layer the hidden row, then the cell row.
    state: Vec<f64>,
    /// The characters, `c` rows of `b` bits.
    sequence: Vec<f64>,
}

impl Lstm {
    /// `l` layers of `b` hidden units over `c` characters: the state uniform in [0, 1) and the
    /// characters of random 0/1 bits (GradBench draws both with numpy; the distributions are
    /// the same, the numbers are not).
    pub fn new(l: usize, b: usize, c: usize) -> Lstm {
        let mut rng = super::Rng::new(31337);
        let state = rng.uniforms(2 * l * b);
        let sequence = (0..c * b)
            .map(|_| f64::from(u8::from(rng.uniform() < 0.5)))
            .collect();
        Lstm::with_data(l, b, state, sequence).expect("sizes made to agree")
    }

    /// The loss over given data: `state` of `2lb` numbers, `sequence` of at least two
    /// characters of `b` bits. An error names the sizes that disagree.
    ///
    /// ```
    /// use workloads::gradbench::Lstm;
    /// assert!(Lstm::with_data(1, 2, vec![0.0; 4], vec![1.0; 6]).is_ok());
    /// let e = Lstm::with_data(1, 2, vec![0.0; 3], vec![1.0; 6]).unwrap_err();
    /// assert!(e.contains("3"), "{e}");
    /// ```
    pub fn with_data(
        layers: usize,
        bits: usize,
        state: Vec<f64>,
        sequence: Vec<f64>,
    ) -> Result<Lstm, String> {
        if layers == 0 || bits == 0 {
            return Err(format!(
                "an LSTM needs at least one layer of one unit, got {layers} of {bits}"
            ));
        }
        if state.len() != 2 * layers * bits {
            return Err(format!(
                "the state has {} numbers, expected 2·{layers}·{bits} = {} (a hidden and a cell \
                 row per layer)",
                state.len(),
                2 * layers * bits
            ));
        }
        if !sequence.len().is_multiple_of(bits) || sequence.len() < 2 * bits {
            return Err(format!(
                "the sequence has {} numbers, expected a multiple of {bits} bits, at least two \
                 characters",
                sequence.len()
            ));
        }
        Ok(Lstm {
            layers,
            bits,
            state,
            sequence,
        })
    }

    /// The number of parameters, `8lb + 3b`.
    pub fn parameters(&self) -> usize {
        (8 * self.layers + 3) * self.bits
    }

    /// The benchmark parameters: uniform in [0, 1), as GradBench draws them.
    pub fn input(&self) -> Vec<f64> {
        super::Rng::new(27182).uniforms(self.parameters())
    }
}

impl Function for Lstm {
    fn eval<T: Op>(&self, x: &[T]) -> Vec<T> {
        vec![self.objective(x, &Nary)]
    }

    fn sizes(&self) -> Option<(usize, usize)> {
        Some((self.parameters(), 1))
    }
}

impl Lstm {
    /// The loss, for any `Float` with the reductions `r`.
    pub fn objective<T: Float>(&self, x: &[T], r: &impl Reduce<T>) -> T {
        let (l, b) = (self.layers, self.bits);
        let (main, extra) = x.split_at(8 * l * b);
        let (in_weight, extra) = extra.split_at(b);
        let (out_weight, out_bias) = extra.split_at(b);
        let mut state: Vec<T> = self.state.iter().map(|&s| c(s)).collect();
        let chars: Vec<&[f64]> = self.sequence.chunks(b).collect();
        let mut input = vec![T::zero(); b];
        let mut prediction = vec![T::zero(); b];
        let mut total = T::zero();
        for t in 0..chars.len() - 1 {
            for ((v, &w), &bit) in input.iter_mut().zip(in_weight).zip(chars[t]) {
                *v = w * c(bit);
            }
            for (layer, state) in state.chunks_mut(2 * b).enumerate() {
                let (weight, bias) = main[8 * b * layer..8 * b * (layer + 1)].split_at(4 * b);
                let (hidden, cell) = state.split_at_mut(b);
                for i in 0..b {
                    let gate = |g: usize, v: T| v * weight[g * b + i] + bias[g * b + i];
                    let forget = sigmoid(gate(0, input[i]));
                    let ingate = sigmoid(gate(1, hidden[i]));
                    let outgate = sigmoid(gate(2, input[i]));
                    let change = gate(3, hidden[i]).tanh();
                    cell[i] = cell[i] * forget + ingate * change;
                    hidden[i] = outgate * cell[i].tanh();
                }
                // The next layer reads this one's new hidden state.
                input.copy_from_slice(hidden);
            }
            for (i, y) in prediction.iter_mut().enumerate() {
                *y = input[i] * out_weight[i] + out_bias[i];
            }
            // ADBench's normaliser: log(Σ exp yᵢ + 2), not a plain logsumexp.
            let lse = (r.sum(prediction.iter().map(|y| y.exp())) + c(2.0)).ln();
            for (&y, &bit) in prediction.iter().zip(chars[t + 1]) {
                total = total + (y - lse) * c(bit);
            }
        }
        -total / c(((chars.len() - 1) * b) as f64)
    }
}

/// `1 / (1 + e⁻ˣ)`.
fn sigmoid<T: Float>(x: T) -> T {
    (T::one() + (-x).exp()).recip()
}
