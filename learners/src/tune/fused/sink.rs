//! Weight gradients added in place while `backward` runs: the fused linear layer and embedding
//! lookup add their weights' gradients straight into one buffer per weight, as PyTorch does.
//!
//! Handed to candle, each weight's gradient would be added into a freshly zeroed tensor of the
//! weight's size (two more passes over every weight of the model, and an allocation). `backward`
//! moves the buffers into candle's `GradStore` afterwards. Outside it, on any other thread or
//! when the loss's own `backward` is called, the kernels hand their gradients to candle as any
//! op does; both routes give the same values (a unit test).

use candle_core::backprop::GradStore;
use candle_core::{Result, Tensor, TensorId};
use std::cell::RefCell;
use std::collections::HashMap;

/// A weight and its gradient so far.
struct Buffer {
    weight: Tensor,
    values: Vec<f32>,
}

thread_local! {
    /// The buffers of the `backward` running on this thread, by weight.
    static SINK: RefCell<Option<HashMap<TensorId, Buffer>>> = const { RefCell::new(None) };
}

/// The gradients of `loss`: candle's backward pass, with the fused kernels' weight gradients
/// added in place.
pub fn backward(loss: &Tensor) -> Result<GradStore> {
    let restore = Restore(SINK.with(|s| s.borrow_mut().replace(HashMap::new())));
    let grads = loss.backward();
    let buffers = SINK.with(|s| s.borrow_mut().take());
    drop(restore);
    let mut grads = grads?;
    for Buffer { weight, values } in buffers.unwrap_or_default().into_values() {
        let g = Tensor::from_vec(values, weight.shape(), weight.device())?;
        // A weight that candle's own ops also used (a tied embedding) has both parts.
        let g = match grads.remove(&weight) {
            Some(other) => (other + g)?,
            None => g,
        };
        grads.insert(&weight, g);
    }
    Ok(grads)
}

/// Puts back what the sink held before a `backward` (nothing, unless one runs inside another),
/// also where the backward pass panics, so that no later backward pass finds a sink.
struct Restore(Option<HashMap<TensorId, Buffer>>);

impl Drop for Restore {
    fn drop(&mut self) {
        let outer = self.0.take();
        SINK.with(|s| *s.borrow_mut() = outer);
    }
}

/// Whether weight gradients go to the sink (a `backward` runs on this thread).
pub fn collecting() -> bool {
    SINK.with(|s| s.borrow().is_some())
}

/// `f(buffer, fresh)` on `weight`'s gradient buffer, where `fresh` says that it holds zeros
/// because nothing was added yet (so `f` may write it without reading it).
pub fn add_to(weight: &Tensor, f: impl FnOnce(&mut [f32], bool) -> Result<()>) -> Result<()> {
    // Out of the map while `f` runs, so that no borrow is held across its work.
    let taken = SINK.with(|s| s.borrow_mut().as_mut().map(|m| m.remove(&weight.id())));
    let Some(taken) = taken else {
        candle_core::bail!("a weight gradient for the sink outside `backward`")
    };
    let fresh = taken.is_none();
    let mut buffer = taken.unwrap_or_else(|| Buffer {
        weight: weight.clone(),
        values: vec![0f32; weight.elem_count()],
    });
    f(&mut buffer.values, fresh)?;
    SINK.with(|s| {
        if let Some(m) = s.borrow_mut().as_mut() {
            m.insert(weight.id(), buffer);
        }
    });
    Ok(())
}
