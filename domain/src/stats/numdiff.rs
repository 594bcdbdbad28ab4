//! Numerical derivatives by central differences with Richardson extrapolation (as R's numDeriv,
//! which lmerTest uses for the Satterthwaite degrees of freedom): gradients, Hessians and
//! Jacobians of the smooth functions the mixed model needs derivatives of.
//!
//! Written out here because no crate offers Richardson-extrapolated second derivatives: a
//! central difference at steps h, h/2 and h/4 is combined twice (errors of order h², then h⁴
//! cancel), so a step large enough to keep rounding small (2% of the coordinate) still gives
//! about ten correct digits.

/// The first step, relative to the coordinate (absolute below `FLOOR`).
const STEP: f64 = 0.02;
const FLOOR: f64 = 0.05;

fn step(x: f64) -> f64 {
    STEP * x.abs().max(FLOOR)
}

/// Extrapolates `d(h)`, `d(h/2)`, `d(h/4)` of an estimate whose error is a series in h².
fn richardson(d: [f64; 3]) -> f64 {
    let r1 = (4.0 * d[1] - d[0]) / 3.0;
    let r2 = (4.0 * d[2] - d[1]) / 3.0;
    (16.0 * r2 - r1) / 15.0
}

/// `x` with `dx` added at coordinates `i` (and `j`).
fn moved(x: &[f64], moves: &[(usize, f64)]) -> Vec<f64> {
    let mut y = x.to_vec();
    for &(i, d) in moves {
        y[i] += d;
    }
    y
}

/// The Hessian of `f` at `x` (symmetric, row-major `n × n`).
pub fn hessian(f: &dyn Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    let n = x.len();
    let f0 = f(x);
    let mut h = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let at = |k: usize| {
                let (hi, hj) = (step(x[i]) / (1 << k) as f64, step(x[j]) / (1 << k) as f64);
                if i == j {
                    (f(&moved(x, &[(i, hi)])) - 2.0 * f0 + f(&moved(x, &[(i, -hi)]))) / (hi * hi)
                } else {
                    (f(&moved(x, &[(i, hi), (j, hj)]))
                        - f(&moved(x, &[(i, hi), (j, -hj)]))
                        - f(&moved(x, &[(i, -hi), (j, hj)]))
                        + f(&moved(x, &[(i, -hi), (j, -hj)])))
                        / (4.0 * hi * hj)
                }
            };
            let v = richardson([at(0), at(1), at(2)]);
            h[i * n + j] = v;
            h[j * n + i] = v;
        }
    }
    h
}

/// The gradient of `f` at `x`.
pub fn gradient(f: &dyn Fn(&[f64]) -> f64, x: &[f64]) -> Vec<f64> {
    (0..x.len())
        .map(|i| {
            let at = |k: usize| {
                let h = step(x[i]) / (1 << k) as f64;
                (f(&moved(x, &[(i, h)])) - f(&moved(x, &[(i, -h)]))) / (2.0 * h)
            };
            richardson([at(0), at(1), at(2)])
        })
        .collect()
}

/// The Jacobian of a vector-valued `f` at `x`: one vector of partial derivatives per
/// coordinate of `x` (`out[i][m]` = ∂f_m/∂x_i).
pub fn jacobian(f: &dyn Fn(&[f64]) -> Vec<f64>, x: &[f64]) -> Vec<Vec<f64>> {
    (0..x.len())
        .map(|i| {
            let at = |k: usize| {
                let h = step(x[i]) / (1 << k) as f64;
                let (up, down) = (f(&moved(x, &[(i, h)])), f(&moved(x, &[(i, -h)])));
                up.iter()
                    .zip(&down)
                    .map(|(u, d)| (u - d) / (2.0 * h))
                    .collect::<Vec<f64>>()
            };
            let d = [at(0), at(1), at(2)];
            (0..d[0].len())
                .map(|m| richardson([d[0][m], d[1][m], d[2][m]]))
                .collect()
        })
        .collect()
}

/// The gradient and Hessian (row-major) of `f` at `x` by plain central differences with the
/// fixed step `h`, as lme4's `deriv12` takes them (`2n² + 1` evaluations where the extrapolated
/// ones take about six times as many): for a criterion that is costly to evaluate and smooth
/// enough that a step of 1e-4 leaves errors far below what is read from it.
pub fn deriv12(f: &dyn Fn(&[f64]) -> f64, x: &[f64], h: f64) -> (Vec<f64>, Vec<f64>) {
    let n = x.len();
    let f0 = f(x);
    let mut g = vec![0.0; n];
    let mut hess = vec![0.0; n * n];
    for i in 0..n {
        let (up, down) = (f(&moved(x, &[(i, h)])), f(&moved(x, &[(i, -h)])));
        g[i] = (up - down) / (2.0 * h);
        hess[i * n + i] = (up - 2.0 * f0 + down) / (h * h);
        for j in 0..i {
            let v = (f(&moved(x, &[(i, h), (j, h)]))
                - f(&moved(x, &[(i, h), (j, -h)]))
                - f(&moved(x, &[(i, -h), (j, h)]))
                + f(&moved(x, &[(i, -h), (j, -h)])))
                / (4.0 * h * h);
            hess[i * n + j] = v;
            hess[j * n + i] = v;
        }
    }
    (g, hess)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derivatives_of_known_functions() {
        // f = x² y + exp(y) + sin(x z): gradient and Hessian by hand.
        let f = |v: &[f64]| v[0] * v[0] * v[1] + v[1].exp() + (v[0] * v[2]).sin();
        let (x, y, z) = (0.7, -0.3, 1.9);
        let g = gradient(&f, &[x, y, z]);
        let want_g = [
            2.0 * x * y + z * (x * z).cos(),
            x * x + y.exp(),
            x * (x * z).cos(),
        ];
        for (a, b) in g.iter().zip(want_g) {
            assert!((a - b).abs() < 1e-10, "{g:?}");
        }
        let h = hessian(&f, &[x, y, z]);
        let s = (x * z).sin();
        let want_h = [
            2.0 * y - z * z * s,
            2.0 * x,
            (x * z).cos() - x * z * s,
            2.0 * x,
            y.exp(),
            0.0,
            (x * z).cos() - x * z * s,
            0.0,
            -x * x * s,
        ];
        for (a, b) in h.iter().zip(want_h) {
            assert!((a - b).abs() < 1e-8, "{h:?}");
        }
        let (g12, h12) = deriv12(&f, &[x, y, z], 1e-4);
        for (a, b) in g12.iter().zip(want_g) {
            assert!((a - b).abs() < 1e-7, "{g12:?}");
        }
        for (a, b) in h12.iter().zip(want_h) {
            assert!((a - b).abs() < 1e-6, "{h12:?}");
        }
        let j = jacobian(&|v: &[f64]| vec![v[0] * v[1], v[1].ln()], &[2.0, 3.0]);
        assert!((j[0][0] - 3.0).abs() < 1e-10 && j[0][1].abs() < 1e-12);
        assert!((j[1][0] - 2.0).abs() < 1e-10 && (j[1][1] - 1.0 / 3.0).abs() < 1e-10);
    }
}
