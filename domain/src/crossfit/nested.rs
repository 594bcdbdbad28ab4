//! The CLUES-style sampler: a fixed test set taken first, then for each seed nested k-shot
//! training sets (10 within 20 within 30) from the rest; NER and reading comprehension take k
//! per question type. Shuffles are numpy's (legacy MT19937), so a seed always gives one sample.

use super::mt19937::Mt19937;
use std::collections::BTreeMap;

/// Indices into the pool: the test set and, per seed, the training set of each k.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestedSample {
    /// In pool order.
    pub test: Vec<usize>,
    /// (seed, k -> training indices in pool order).
    pub seeds: Vec<(u32, BTreeMap<usize, Vec<usize>>)>,
}

/// Samples from a pool whose items have a group (`groups[i]`: the question type, or one shared
/// value for tasks sampled as a whole). The test set is the first `test_size` items of the pool
/// shuffled with `test_seed`; each seed shuffles the remaining items and, for every group, takes
/// the first k (largest k first, so smaller sets are prefixes: nested by construction).
pub fn nested_sample<G: Ord + Clone>(
    groups: &[G],
    ks: &[usize],
    seeds: &[u32],
    test_size: usize,
    test_seed: u32,
) -> Result<NestedSample, String> {
    let mut order: Vec<usize> = (0..groups.len()).collect();
    Mt19937::new(test_seed).shuffle(&mut order);
    if test_size > order.len() {
        return Err(format!(
            "a test set of {test_size} from a pool of {}",
            order.len()
        ));
    }
    let mut test: Vec<usize> = order[..test_size].to_vec();
    test.sort_unstable();
    let mut rest: Vec<usize> = order[test_size..].to_vec();
    rest.sort_unstable();
    let max_k = ks.iter().copied().max().unwrap_or(0);
    let mut per_group: BTreeMap<G, usize> = BTreeMap::new();
    for &i in &rest {
        *per_group.entry(groups[i].clone()).or_default() += 1;
    }
    if let Some((_, n)) = per_group.iter().find(|(_, n)| **n < max_k) {
        return Err(format!(
            "a group has only {n} items outside the test set; {max_k}-shot sets need {max_k} per group"
        ));
    }
    let samples = seeds
        .iter()
        .map(|&seed| {
            let mut shuffled = rest.clone();
            Mt19937::new(seed).shuffle(&mut shuffled);
            let mut by_group: BTreeMap<G, Vec<usize>> = BTreeMap::new();
            for i in shuffled {
                by_group.entry(groups[i].clone()).or_default().push(i);
            }
            let sets = ks
                .iter()
                .map(|&k| {
                    let mut set: Vec<usize> = by_group
                        .values()
                        .flat_map(|g| g[..k].iter().copied())
                        .collect();
                    set.sort_unstable();
                    (k, set)
                })
                .collect();
            (seed, sets)
        })
        .collect();
    Ok(NestedSample {
        test,
        seeds: samples,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_disjoint_from_test_and_per_group() {
        // 3 question types x 50 items.
        let groups: Vec<u8> = (0..150).map(|i| (i % 3) as u8).collect();
        let s = nested_sample(&groups, &[10, 20, 30], &[100, 13, 21, 42, 87], 30, 0).unwrap();
        assert_eq!(s.test.len(), 30);
        assert_eq!(s.seeds.len(), 5);
        for (_, sets) in &s.seeds {
            for k in [10, 20, 30] {
                let set = &sets[&k];
                assert_eq!(set.len(), 3 * k);
                for g in 0..3u8 {
                    assert_eq!(set.iter().filter(|&&i| groups[i] == g).count(), k);
                }
                assert!(set.iter().all(|i| !s.test.contains(i)));
            }
            assert!(sets[&10].iter().all(|i| sets[&20].contains(i)));
            assert!(sets[&20].iter().all(|i| sets[&30].contains(i)));
        }
        // Seeds differ, and the same seed gives the same sample.
        assert_ne!(s.seeds[0].1[&10], s.seeds[1].1[&10]);
        let again = nested_sample(&groups, &[10, 20, 30], &[100], 30, 0).unwrap();
        assert_eq!(again.seeds[0], s.seeds[0]);
        assert_eq!(again.test, s.test);
    }

    #[test]
    fn too_small_pools_are_refused() {
        let groups = vec![(); 40];
        assert!(nested_sample(&groups, &[10, 20, 30], &[1], 20, 0)
            .unwrap_err()
            .contains("only 20 items"));
        assert!(nested_sample(&groups, &[10], &[1], 41, 0).is_err());
        assert_eq!(
            nested_sample(&groups, &[10], &[1], 30, 0).unwrap().seeds[0].1[&10].len(),
            10
        );
    }
}
