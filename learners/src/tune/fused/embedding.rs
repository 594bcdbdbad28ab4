//! The embedding lookup (a table's rows by id) with its backward pass, which adds each row's
//! gradient into the table's: in the table's own buffer while `sink::backward` runs.
//!
//! candle's lookup (`index_select`) zeroes a tensor of the table's size for its gradient, copies
//! it, and its backward pass adds that into another fresh one: three passes over BERT-base's
//! 94 MB word table in every update, where the rows of a batch are a few hundred.

use super::kernel::{op1, with_values, In, Kernel};
use super::{sink, ROWS};
use candle_core::{bail, DType, Device, Result, Shape, Tensor};
use rayon::prelude::*;

/// The rows of `table` (`[n, h]`) at `ids` (integers, one dimension): `[ids, h]`.
pub fn embedding_op(table: &Tensor, ids: &Tensor) -> Result<Tensor> {
    let ids = ids.to_dtype(DType::U32)?.to_vec1::<u32>()?;
    op1(Embedding { ids }, table)
}

struct Embedding {
    ids: Vec<u32>,
}

impl Embedding {
    /// Adds the rows of `dy` (`[ids, h]`) into `table`'s rows at the ids, in the ids' order.
    fn scatter(&self, table: &mut [f32], dy: &[f32], h: usize) {
        for (&id, row) in self.ids.iter().zip(dy.chunks(h)) {
            for (t, g) in table[id as usize * h..][..h].iter_mut().zip(row) {
                *t += g;
            }
        }
    }
}

impl Kernel<1> for Embedding {
    const NAME: &'static str = "fused-embedding";

    fn forward(&self, [table]: [In; 1]) -> Result<(Vec<f32>, Shape)> {
        let &[n, h] = table.shape.dims() else {
            bail!("an embedding table must be a matrix, not {:?}", table.shape)
        };
        if let Some(id) = self.ids.iter().find(|&&id| id as usize >= n) {
            bail!("id {id} is past the embedding table's {n} rows");
        }
        let mut y = vec![0f32; self.ids.len() * h];
        y.par_chunks_mut(h.max(1))
            .zip(self.ids.par_iter())
            .with_min_len(ROWS)
            .for_each(|(y, &id)| y.copy_from_slice(&table.v[id as usize * h..][..h]));
        Ok((y, Shape::from((self.ids.len(), h))))
    }

    fn backward(
        &self,
        [table]: [&Tensor; 1],
        _y: &Tensor,
        dy: &Tensor,
    ) -> Result<[Option<Tensor>; 1]> {
        let (n, h) = table.dims2()?;
        if dy.dims() != [self.ids.len(), h] {
            bail!(
                "an embedding's gradient {:?} for {} ids of {h}",
                dy.dims(),
                self.ids.len()
            );
        }
        if sink::collecting() {
            with_values([dy], |[dy]| {
                sink::add_to(table, |t, _| {
                    self.scatter(t, dy, h);
                    Ok(())
                })
            })?;
            return Ok([None]);
        }
        let mut g = vec![0f32; n * h];
        with_values([dy], |[dy]| {
            self.scatter(&mut g, dy, h);
            Ok(())
        })?;
        Ok([Some(Tensor::from_vec(g, (n, h), &Device::Cpu)?)])
    }
}
