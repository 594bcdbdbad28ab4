//! The fused kernels against candle's composed ops: values, gradients, and the same bits on any
//! number of threads.

use super::super::{ops, Dropout};
use candle_core::{Device, Result, Tensor, Var};

fn random(shape: &[usize], seed: u64, spread: f64) -> Tensor {
    let mut rng = domain::rng::SplitMix64(seed);
    let n = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| (spread * rng.normal()) as f32).collect();
    Tensor::from_vec(v, shape, &Device::Cpu).unwrap()
}

fn close(a: &Tensor, b: &Tensor, within: f32) -> Result<f32> {
    let gap = (a - b)?.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?;
    let size = b.abs()?.flatten_all()?.max(0)?.to_scalar::<f32>()?;
    assert!(gap <= within * size.max(1.0), "gap {gap} of {size}");
    Ok(gap)
}

/// `f` and `g` on the same variables: their values and gradients of Σ out ⊙ r agree.
fn same_as_composed(
    inputs: &[Tensor],
    f: impl Fn(&[Tensor]) -> Result<Tensor>,
    g: impl Fn(&[Tensor]) -> Result<Tensor>,
) -> Result<()> {
    let vars: Vec<Var> = inputs
        .iter()
        .map(|t| Var::from_tensor(t).unwrap())
        .collect();
    let ts: Vec<Tensor> = vars.iter().map(|v| v.as_tensor().clone()).collect();
    let (a, b) = (f(&ts)?, g(&ts)?);
    close(&a, &b, 1e-5)?;
    let r = random(a.dims(), 99, 1.0);
    let (ga, gb) = (
        (&a * &r)?.sum_all()?.backward()?,
        (&b * &r)?.sum_all()?.backward()?,
    );
    for t in &ts {
        match (ga.get(t), gb.get(t)) {
            (Some(x), Some(y)) => {
                close(x, y, 1e-4)?;
            }
            (x, y) => assert_eq!(x.is_some(), y.is_some(), "a gradient on one side only"),
        }
    }
    Ok(())
}

#[test]
fn gelu_matches_candles_and_its_gradient() -> Result<()> {
    let x = random(&[3, 7, 40], 1, 3.0);
    let y = super::gelu_op(&x)?;
    // Within 3e-7 of candle's (libm's erf) on every value, scaled by |x| beyond 1 (`lanes`).
    let gap = ((&y - x.gelu_erf()?)?.abs()? / x.abs()?.maximum(1.0)?)?;
    let worst = gap.flatten_all()?.max(0)?.to_scalar::<f32>()?;
    assert!(worst <= 3e-7, "{worst}");
    same_as_composed(&[x], |t| super::gelu_op(&t[0]), |t| t[0].gelu_erf())
}

#[test]
fn layer_norm_matches_the_composed_one_and_its_gradients() -> Result<()> {
    // More rows than a parallel piece, so that dw and db add several pieces.
    let x = (random(&[5, 29, 48], 2, 2.0) + 0.7)?;
    let (w, b) = ((random(&[48], 3, 0.3) + 1.0)?, random(&[48], 4, 0.2));
    same_as_composed(
        &[x, w, b],
        |t| super::layer_norm_op(&t[0], &t[1], &t[2], 1e-12),
        |t| ops::layer_norm_composed(&t[0], &t[1], &t[2], 1e-12),
    )
}

#[test]
fn masked_softmax_matches_the_composed_one_and_its_gradient() -> Result<()> {
    let scores = random(&[3, 4, 9, 9], 5, 4.0);
    // The second input has its last three positions padded.
    let mut mask = vec![0f32; 27];
    for m in &mut mask[15..18] {
        *m = -10000.0;
    }
    let bias = Tensor::from_vec(mask, (3, 1, 1, 9), &Device::Cpu)?;
    let y = super::masked_softmax_op(&scores, &bias, 0.125)?;
    let padded = y.get(1)?.narrow(2, 6, 3)?.abs()?.flatten_all()?.max(0)?;
    assert!(padded.to_scalar::<f32>()? < 1e-30);
    same_as_composed(
        &[scores],
        |t| super::masked_softmax_op(&t[0], &bias, 0.125),
        |t| ops::masked_softmax_composed(&t[0], &bias, 0.125),
    )
}

/// Every kernel gives the same bits on one thread and on three.
#[test]
fn the_results_do_not_depend_on_the_threads() -> Result<()> {
    let run = |threads: usize| -> Vec<Vec<f32>> {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let x = Var::from_tensor(&random(&[200, 64], 6, 1.5)).unwrap();
            let w = Var::from_tensor(&random(&[64], 7, 1.0)).unwrap();
            let b = Var::from_tensor(&random(&[64], 8, 1.0)).unwrap();
            let m = Var::from_tensor(&random(&[64, 64], 13, 0.2)).unwrap();
            let h = super::layer_norm_op(&x, &w, &b, 1e-5).unwrap();
            let h = super::linear_op(&h, &m, &b).unwrap();
            let s = super::masked_softmax_op(
                &super::gelu_op(&h).unwrap().reshape((2, 4, 25, 64)).unwrap(),
                &Tensor::zeros((2, 1, 1, 64), candle_core::DType::F32, &Device::Cpu).unwrap(),
                0.5,
            )
            .unwrap();
            let a = super::attention_op(
                &h.reshape((2, 100, 64)).unwrap(),
                &s.reshape((2, 100, 64)).unwrap(),
                &h.reshape((2, 100, 64)).unwrap(),
                &Tensor::zeros((2, 1, 1, 100), candle_core::DType::F32, &Device::Cpu).unwrap(),
                4,
                0.25,
                Dropout::on(0.1, 3).factors(2 * 4 * 100 * 100),
            )
            .unwrap();
            let g = ((s * random(&[2, 4, 25, 64], 9, 1.0))
                .unwrap()
                .sum_all()
                .unwrap()
                + (a * random(&[2, 100, 64], 17, 1.0))
                    .unwrap()
                    .sum_all()
                    .unwrap())
            .unwrap()
            .backward()
            .unwrap();
            [x.as_tensor(), w.as_tensor(), b.as_tensor()]
                .iter()
                .map(|t| g.get(t).unwrap().flatten_all().unwrap().to_vec1().unwrap())
                .collect()
        })
    };
    assert_eq!(run(1), run(3));
    Ok(())
}

#[test]
fn linear_matches_the_composed_one_and_its_gradients() -> Result<()> {
    // Rows over several pieces; a weight that is not square, so a transpose would show.
    let x = random(&[3, 37, 24], 10, 1.0);
    let (w, b) = (random(&[40, 24], 11, 0.2), random(&[40], 12, 0.5));
    same_as_composed(
        &[x, w, b],
        |t| super::linear_op(&t[0], &t[1], &t[2]),
        |t| ops::linear_composed(&t[0], &t[1], &t[2]),
    )
}

#[test]
fn attention_matches_the_composed_one_and_its_gradients() -> Result<()> {
    // Two inputs of 9 positions in 3 heads of 8; the second input's last three positions padded.
    let (q, k, v) = (
        random(&[2, 9, 24], 14, 1.0),
        random(&[2, 9, 24], 15, 1.0),
        random(&[2, 9, 24], 16, 1.0),
    );
    let mut mask = vec![0f32; 18];
    for m in &mut mask[15..18] {
        *m = -10000.0;
    }
    let bias = Tensor::from_vec(mask, (2, 1, 1, 9), &Device::Cpu)?;
    let a = ops::Attend {
        bias: &bias,
        heads: 3,
        scale: 0.35,
    };
    // Without dropout, and with it (the same draws on both sides).
    for p in [0.0, 0.3] {
        let fused = ops::attention(&q, &k, &v, &a, &mut Dropout::on(p, 7))?;
        assert!(super::applies(&q));
        let composed = ops::attention_composed(&q, &k, &v, &a, None, &mut Dropout::on(p, 7))?;
        close(&fused, &composed, 1e-5)?;
        same_as_composed(
            &[q.clone(), k.clone(), v.clone()],
            |t| ops::attention(&t[0], &t[1], &t[2], &a, &mut Dropout::on(p, 7)),
            |t| ops::attention_composed(&t[0], &t[1], &t[2], &a, None, &mut Dropout::on(p, 7)),
        )?;
    }
    // A padded key changes nothing that attends.
    let mut v2 = v.to_vec3::<f32>()?;
    v2[1][8] = vec![50.0; 24];
    let v2 = Tensor::new(v2, &Device::Cpu)?;
    let (y1, y2) = (
        ops::attention(&q, &k, &v, &a, &mut Dropout::off())?,
        ops::attention(&q, &k, &v2, &a, &mut Dropout::off())?,
    );
    close(&y1, &y2, 1e-6)?;
    Ok(())
}

#[test]
fn attention_refuses_shapes_that_do_not_fit() -> Result<()> {
    let q = random(&[2, 9, 24], 14, 1.0);
    let bias = Tensor::zeros((2, 1, 1, 9), candle_core::DType::F32, &Device::Cpu)?;
    let other = random(&[2, 8, 24], 15, 1.0);
    let e = super::attention_op(&q, &other, &q, &bias, 3, 1.0, None).unwrap_err();
    assert!(e.to_string().contains("differ"), "{e}");
    let e = super::attention_op(&q, &q, &q, &bias, 5, 1.0, None).unwrap_err();
    assert!(e.to_string().contains("in 5 heads"), "{e}");
    let e = super::attention_op(&q, &q, &q, &bias, 3, 1.0, Some(vec![1.0; 10])).unwrap_err();
    assert!(e.to_string().contains("dropout mask"), "{e}");
    Ok(())
}

/// Weight gradients added in place (`ops::backward`) are the ones candle's own backward pass
/// gives, also for a weight used twice and for a table that candle's ops use as well; a plain
/// backward pass afterwards finds no sink.
#[test]
fn gradients_in_place_are_candles() -> Result<()> {
    let table = Var::from_tensor(&random(&[11, 6], 20, 1.0))?;
    let w = Var::from_tensor(&random(&[6, 6], 21, 0.5))?;
    let b = Var::from_tensor(&random(&[6], 22, 0.5))?;
    let ids = Tensor::new(&[3u32, 0, 3, 10, 7], &Device::Cpu)?;
    let loss = || -> Result<Tensor> {
        let x = ops::embedding(table.as_tensor(), &ids)?.unsqueeze(0)?;
        let h = ops::linear(&ops::linear(&x, &w, &b)?, &w, &b)?;
        // The table again, through candle's matmul: a tied output layer.
        let logits = h.squeeze(0)?.matmul(&table.as_tensor().t()?)?;
        (logits * random(&[5, 11], 23, 1.0))?.sum_all()
    };
    let in_place = ops::backward(&loss()?)?;
    let plain = loss()?.backward()?;
    for v in [&table, &w, &b] {
        let (a, c) = (in_place.get(v).unwrap(), plain.get(v).unwrap());
        close(a, c, 1e-6)?;
    }
    let e = super::embedding_op(table.as_tensor(), &Tensor::new(&[11u32], &Device::Cpu)?);
    assert!(e
        .unwrap_err()
        .to_string()
        .contains("past the embedding table's 11 rows"));
    Ok(())
}

#[test]
fn dropout_on_the_cpu_is_the_product_with_its_factors_and_its_gradient() -> Result<()> {
    let x = random(&[3, 50, 40], 24, 1.0);
    let factors = Dropout::on(0.25, 5).factors(6000).unwrap();
    assert!(factors.contains(&0.0));
    let mask = Tensor::from_vec(factors, (3, 50, 40), &Device::Cpu)?;
    same_as_composed(
        &[x],
        |t| Dropout::on(0.25, 5).apply(&t[0]),
        |t| &t[0] * &mask,
    )
}
