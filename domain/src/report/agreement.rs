//! Agreement between the annotators of a scenario: Fleiss' kappa for label tasks, and the
//! mean pairwise S1 between annotators for span tasks.

use crate::s1::s1_item;

/// Fleiss' kappa from per-item category counts (each row: how many raters chose each
/// category; every row must sum to the same number of raters, at least 2). `None` when
/// undefined: no items, fewer than 2 raters, unequal rows, or all ratings in one category.
pub fn fleiss_kappa(counts: &[Vec<usize>]) -> Option<f64> {
    let n: usize = counts.first()?.iter().sum();
    if n < 2 || counts.iter().any(|row| row.iter().sum::<usize>() != n) {
        return None;
    }
    let items = counts.len() as f64;
    let categories = counts[0].len();
    let nf = n as f64;
    let p_bar = counts
        .iter()
        .map(|row| {
            let agree: usize = row.iter().map(|c| c * c).sum();
            (agree as f64 - nf) / (nf * (nf - 1.0))
        })
        .sum::<f64>()
        / items;
    let p_e: f64 = (0..categories)
        .map(|j| {
            let pj = counts.iter().map(|row| row[j]).sum::<usize>() as f64 / (items * nf);
            pj * pj
        })
        .sum();
    if (1.0 - p_e).abs() < 1e-12 {
        return None;
    }
    Some((p_bar - p_e) / (1.0 - p_e))
}

/// Mean over annotator pairs of the mean S1 between their answers, over the items both
/// answered (`None` = skipped or not answered). Returns the value and the number of pairs
/// that shared an item; `None` when no pair did.
pub fn mean_pairwise_s1(answers: &[Vec<Option<Vec<String>>>]) -> Option<(f64, usize)> {
    let mut per_pair = Vec::new();
    for a in 0..answers.len() {
        for b in a + 1..answers.len() {
            let scores: Vec<f64> = answers[a]
                .iter()
                .zip(&answers[b])
                .filter_map(|(x, y)| Some(s1_item(x.as_ref()?, y.as_ref()?)))
                .collect();
            if !scores.is_empty() {
                per_pair.push(scores.iter().sum::<f64>() / scores.len() as f64);
            }
        }
    }
    (!per_pair.is_empty()).then(|| {
        (
            per_pair.iter().sum::<f64>() / per_pair.len() as f64,
            per_pair.len(),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleiss_worked_example() {
        // The textbook example (10 subjects, 14 raters, 5 categories): P = 0.378, Pe = 0.213,
        // kappa = 0.210 (Fleiss 1971, as reproduced in most references).
        let rows = vec![
            vec![0, 0, 0, 0, 14],
            vec![0, 2, 6, 4, 2],
            vec![0, 0, 3, 5, 6],
            vec![0, 3, 9, 2, 0],
            vec![2, 2, 8, 1, 1],
            vec![7, 7, 0, 0, 0],
            vec![3, 2, 6, 3, 0],
            vec![2, 5, 3, 2, 2],
            vec![6, 5, 2, 1, 0],
            vec![0, 2, 2, 3, 7],
        ];
        let k = fleiss_kappa(&rows).unwrap();
        assert!((k - 0.20993).abs() < 1e-4, "{k}");
    }

    #[test]
    fn fleiss_limits() {
        // Perfect agreement over two categories used: 1.
        assert_eq!(fleiss_kappa(&[vec![3, 0], vec![0, 3]]), Some(1.0));
        // Everyone always says the same category: chance agreement is 1, undefined.
        assert_eq!(fleiss_kappa(&[vec![3, 0], vec![3, 0]]), None);
        assert_eq!(fleiss_kappa(&[vec![2, 0], vec![1, 0]]), None);
        assert_eq!(fleiss_kappa(&[]), None);
        // Two raters who always disagree on a balanced scale: -1.
        let k = fleiss_kappa(&[vec![1, 1], vec![1, 1]]).unwrap();
        assert!((k + 1.0).abs() < 1e-12);
    }

    #[test]
    fn pairwise_s1_over_shared_items() {
        let s = |xs: &[&str]| Some(xs.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        let a = vec![s(&["Paris"]), s(&[]), None];
        let b = vec![s(&["Paris", "Rome"]), s(&[]), s(&["x"])];
        let c = vec![s(&["Rome"]), s(&["y"]), s(&["x"])];
        // a-b: (2/3 + 1) / 2; a-c: (0 + 0) / 2; b-c: (2/3 + 0 + 1) / 3.
        let (m, pairs) = mean_pairwise_s1(&[a, b, c]).unwrap();
        let want = ((2.0 / 3.0 + 1.0) / 2.0 + 0.0 + (2.0 / 3.0 + 1.0) / 3.0) / 3.0;
        assert_eq!(pairs, 3);
        assert!((m - want).abs() < 1e-12);
        assert_eq!(mean_pairwise_s1(&[vec![s(&["a"])]]), None);
    }
}
