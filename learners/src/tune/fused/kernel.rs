//! What a fused kernel is: a function of contiguous f32 inputs on the CPU with its backward
//! pass, and the adapter that makes it one of candle's custom ops of one, two or three inputs.

use candle_core::{
    bail, CpuStorage, CustomOp1, CustomOp2, CustomOp3, Layout, Result, Shape, Storage, Tensor,
};

/// One input of a kernel: its values (contiguous) and its shape.
#[derive(Clone, Copy)]
pub struct In<'a> {
    pub v: &'a [f32],
    pub shape: &'a Shape,
}

impl In<'_> {
    /// The size of the last dimension (1 for a scalar).
    pub fn last(&self) -> usize {
        self.shape.dims().last().copied().unwrap_or(1)
    }
}

/// A fused kernel of `N` inputs.
pub trait Kernel<const N: usize>: Send + Sync + 'static {
    const NAME: &'static str;

    /// The output's values and shape.
    fn forward(&self, inputs: [In; N]) -> Result<(Vec<f32>, Shape)>;

    /// The inputs' gradients from the inputs, the output and the output's gradient (a kernel
    /// that computes gradients has none of its own).
    fn backward(&self, _x: [&Tensor; N], _y: &Tensor, _dy: &Tensor) -> Result<[Option<Tensor>; N]> {
        bail!("{} has no backward pass", Self::NAME)
    }
}

/// A CPU tensor's values as a slice of its storage (`l` its layout), where they are f32 and
/// contiguous: what the hand-written kernels (`fused`, `adam`) read and write.
pub fn f32_values<'s>(s: &'s CpuStorage, l: &Layout) -> Result<&'s [f32]> {
    match (s, l.contiguous_offsets()) {
        (CpuStorage::F32(v), Some((a, b))) => Ok(&v[a..b]),
        _ => candle_core::bail!("an f32 contiguous tensor is needed"),
    }
}

/// `f` on the values of CPU f32 contiguous tensors, read in place: a backward pass that needs
/// more inputs than candle's custom ops take (three).
pub fn with_values<const N: usize, R>(
    tensors: [&Tensor; N],
    f: impl FnOnce([&[f32]; N]) -> Result<R>,
) -> Result<R> {
    let guards = tensors.map(Tensor::storage_and_layout);
    let mut values = Vec::with_capacity(N);
    for (storage, layout) in &guards {
        let Storage::Cpu(s) = &**storage else {
            bail!("a fused kernel's input is off the CPU")
        };
        values.push(f32_values(s, layout)?);
    }
    match <[&[f32]; N]>::try_from(values) {
        Ok(values) => f(values),
        Err(_) => bail!("{N} tensors read as {N} slices"),
    }
}

/// A kernel as candle's custom op.
struct Op<K>(K);

fn input<'a>(s: &'a CpuStorage, l: &'a Layout) -> Result<In<'a>> {
    Ok(In {
        v: f32_values(s, l)?,
        shape: l.shape(),
    })
}

fn output((v, shape): (Vec<f32>, Shape)) -> (CpuStorage, Shape) {
    (CpuStorage::F32(v), shape)
}

impl<K: Kernel<1>> CustomOp1 for Op<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn cpu_fwd(&self, s: &CpuStorage, l: &Layout) -> Result<(CpuStorage, Shape)> {
        self.0.forward([input(s, l)?]).map(output)
    }

    fn bwd(&self, x: &Tensor, y: &Tensor, dy: &Tensor) -> Result<Option<Tensor>> {
        let [dx] = self.0.backward([x], y, &dy.contiguous()?)?;
        Ok(dx)
    }
}

impl<K: Kernel<2>> CustomOp2 for Op<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        self.0.forward([input(s1, l1)?, input(s2, l2)?]).map(output)
    }

    fn bwd(
        &self,
        x1: &Tensor,
        x2: &Tensor,
        y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>)> {
        let [d1, d2] = self.0.backward([x1, x2], y, &dy.contiguous()?)?;
        Ok((d1, d2))
    }
}

impl<K: Kernel<3>> CustomOp3 for Op<K> {
    fn name(&self) -> &'static str {
        K::NAME
    }

    fn cpu_fwd(
        &self,
        s1: &CpuStorage,
        l1: &Layout,
        s2: &CpuStorage,
        l2: &Layout,
        s3: &CpuStorage,
        l3: &Layout,
    ) -> Result<(CpuStorage, Shape)> {
        let inputs = [input(s1, l1)?, input(s2, l2)?, input(s3, l3)?];
        self.0.forward(inputs).map(output)
    }

    fn bwd(
        &self,
        x1: &Tensor,
        x2: &Tensor,
        x3: &Tensor,
        y: &Tensor,
        dy: &Tensor,
    ) -> Result<(Option<Tensor>, Option<Tensor>, Option<Tensor>)> {
        let [d1, d2, d3] = self.0.backward([x1, x2, x3], y, &dy.contiguous()?)?;
        Ok((d1, d2, d3))
    }
}

/// Kernel `k` on `x`, recorded for the backward pass.
pub fn op1<K: Kernel<1>>(k: K, x: &Tensor) -> Result<Tensor> {
    x.contiguous()?.apply_op1(Op(k))
}

/// Kernel `k` on `a` and `b`, recorded for the backward pass.
pub fn op2<K: Kernel<2>>(k: K, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    a.contiguous()?.apply_op2(&b.contiguous()?, Op(k))
}

/// Kernel `k` on `a`, `b` and `c`, recorded for the backward pass.
pub fn op3<K: Kernel<3>>(k: K, a: &Tensor, b: &Tensor, c: &Tensor) -> Result<Tensor> {
    a.contiguous()?
        .apply_op3(&b.contiguous()?, &c.contiguous()?, Op(k))
}

/// Kernel `k` on `a` and `b`, not recorded (a backward pass's).
pub fn grad2<K: Kernel<2>>(k: K, a: &Tensor, b: &Tensor) -> Result<Tensor> {
    a.contiguous()?.apply_op2_no_bwd(&b.contiguous()?, &Op(k))
}

/// Kernel `k` on `a`, `b` and `c`, not recorded (a backward pass's).
pub fn grad3<K: Kernel<3>>(k: K, a: &Tensor, b: &Tensor, c: &Tensor) -> Result<Tensor> {
    a.contiguous()?
        .apply_op3_no_bwd(&b.contiguous()?, &c.contiguous()?, &Op(k))
}
