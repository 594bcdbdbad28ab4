//! Small helpers for reading and binding rows: a list of ids as the JSON array a query's
//! `json_each` reads, and rows folded into groups in the order they come.

/// `ids` as a JSON array (`[1,2,3]`), for the `json_each` / `jsonb_array_elements_text` of a
/// query: written out here, so it cannot fail.
pub fn json_ids<T: std::fmt::Display>(ids: &[T]) -> String {
    let parts: Vec<String> = ids.iter().map(|i| i.to_string()).collect();
    format!("[{}]", parts.join(","))
}

/// The last group of `out` when `same` holds of it, else a `new` one pushed: rows read in
/// order, folded into groups as they come.
pub fn group_of<T>(out: &mut Vec<T>, same: impl Fn(&T) -> bool, new: impl FnOnce() -> T) -> &mut T {
    if !out.last().is_some_and(same) {
        out.push(new());
    }
    let last = out.len() - 1;
    &mut out[last]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_back_as_json_and_groups_follow_the_rows() {
        let ids: Vec<i64> = serde_json::from_str(&json_ids(&[3, -1, 40])).unwrap();
        assert_eq!(ids, [3, -1, 40]);
        assert_eq!(json_ids::<i64>(&[]), "[]");
        let mut groups: Vec<(char, u32)> = Vec::new();
        for c in "aabccc".chars() {
            group_of(&mut groups, |g| g.0 == c, || (c, 0)).1 += 1;
        }
        assert_eq!(groups, [('a', 2), ('b', 1), ('c', 3)]);
    }
}
