//! Majority vote over annotators' answers to one item: labels by plurality, span sets per
//! span string (kept when more than half of the voting annotators chose it); ties reported.

use std::collections::HashMap;

/// The combined answer of an item and whether a tie had to be broken (labels) or left a span
/// string out (spans: chosen by exactly half of the voters).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    pub answer: Vec<String>,
    pub tie: bool,
}

/// Counts each ballot's distinct strings, in order of first appearance.
fn count<S: AsRef<str>>(ballots: &[&[S]]) -> Vec<(String, usize)> {
    let mut order: Vec<(String, usize)> = Vec::new();
    let mut at: HashMap<String, usize> = HashMap::new();
    for ballot in ballots {
        let mut seen = std::collections::HashSet::new();
        for s in ballot.iter().map(AsRef::as_ref) {
            if !seen.insert(s) {
                continue;
            }
            match at.get(s) {
                Some(&i) => order[i].1 += 1,
                None => {
                    at.insert(s.to_string(), order.len());
                    order.push((s.to_string(), 1));
                }
            }
        }
    }
    order
}

/// Plurality vote of label ballots (a skip is no ballot). A tie among the most chosen labels
/// is broken by the task's label order (`order`), then alphabetically, and reported.
pub fn plurality<S: AsRef<str>>(ballots: &[&[S]], order: &[String]) -> Vote {
    let counts = count(ballots);
    let Some(top) = counts.iter().map(|(_, c)| *c).max() else {
        return Vote {
            answer: Vec::new(),
            tie: false,
        };
    };
    let mut best: Vec<&String> = counts
        .iter()
        .filter(|(_, c)| *c == top)
        .map(|(s, _)| s)
        .collect();
    let rank = |s: &String| order.iter().position(|o| o == s).unwrap_or(usize::MAX);
    best.sort_by(|a, b| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    Vote {
        answer: vec![best[0].clone()],
        tie: best.len() > 1,
    }
}

/// Span-set vote: every voter's set (an explicit "no answer" is an empty set; a skip is no
/// ballot); a span string is kept when more than half of the ballots hold it. A string held
/// by exactly half is left out and the item reported as a tie.
pub fn span_majority<S: AsRef<str>>(ballots: &[&[S]]) -> Vote {
    let n = ballots.len();
    let counts = count(ballots);
    Vote {
        tie: counts.iter().any(|(_, c)| 2 * c == n),
        answer: counts
            .into_iter()
            .filter(|(_, c)| 2 * c > n)
            .map(|(s, _)| s)
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(xs: &[&str]) -> Vec<String> {
        xs.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn plurality_with_ties_broken_by_label_order() {
        let order = v(&["negative", "positive"]);
        let b = [v(&["positive"]), v(&["negative"]), v(&["positive"])];
        let refs: Vec<&[String]> = b.iter().map(Vec::as_slice).collect();
        assert_eq!(
            plurality(&refs, &order),
            Vote {
                answer: v(&["positive"]),
                tie: false
            }
        );
        let tied = [v(&["positive"]), v(&["negative"])];
        let refs: Vec<&[String]> = tied.iter().map(Vec::as_slice).collect();
        assert_eq!(
            plurality(&refs, &order),
            Vote {
                answer: v(&["negative"]),
                tie: true
            }
        );
        let none: Vec<&[String]> = Vec::new();
        assert_eq!(plurality(&none, &order).answer, Vec::<String>::new());
    }

    #[test]
    fn spans_need_more_than_half() {
        let b = [v(&["Paris", "Rome"]), v(&["Paris"]), v(&[])];
        let refs: Vec<&[String]> = b.iter().map(Vec::as_slice).collect();
        // Paris 2/3 kept, Rome 1/3 out; no string at exactly half.
        assert_eq!(
            span_majority(&refs),
            Vote {
                answer: v(&["Paris"]),
                tie: false
            }
        );
        let two = [v(&["Paris", "Paris"]), v(&["Rome"])];
        let refs: Vec<&[String]> = two.iter().map(Vec::as_slice).collect();
        // Duplicates in one ballot count once; both strings at 1/2: a tie, nothing kept.
        assert_eq!(
            span_majority(&refs),
            Vote {
                answer: vec![],
                tie: true
            }
        );
        let empties = [v(&[]), v(&[]), v(&["x"])];
        let refs: Vec<&[String]> = empties.iter().map(Vec::as_slice).collect();
        assert_eq!(span_majority(&refs).answer, Vec::<String>::new());
    }
}
