//! "Did you mean": the known names closest to a misspelt one.

/// The candidates closest to `name` that are likely typos of it (edit distance,
/// transpositions included, at most 2; at most 1 for names of 3 characters or
/// fewer), closest first, at most 3, without repetitions.
pub fn closest<'c>(name: &str, candidates: impl Iterator<Item = &'c str>) -> Vec<&'c str> {
    let limit = if name.chars().count() <= 3 { 1 } else { 2 };
    let mut near: Vec<(usize, &str)> = candidates
        .filter(|c| *c != name)
        .map(|c| (distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .collect();
    near.sort_unstable();
    near.dedup();
    near.into_iter().take(3).map(|(_, c)| c).collect()
}

/// The note for [`closest`]'s candidates: "did you mean `a`?", "did you mean `a`
/// or `b`?", "did you mean `a`, `b` or `c`?"; `None` when there are none.
pub fn did_you_mean<'c>(name: &str, candidates: impl Iterator<Item = &'c str>) -> Option<String> {
    let names: Vec<String> = closest(name, candidates)
        .into_iter()
        .map(|c| format!("`{c}`"))
        .collect();
    let (last, rest) = names.split_last()?;
    Some(if rest.is_empty() {
        format!("did you mean {last}?")
    } else {
        format!("did you mean {} or {last}?", rest.join(", "))
    })
}

/// The optimal-string-alignment distance: insertions, deletions, substitutions
/// and transpositions of adjacent characters.
pub fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1)
                .min(d[i - 1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance() {
        assert_eq!(distance("topDown", "topDown"), 0);
        assert_eq!(distance("topDwon", "topDown"), 1);
        assert_eq!(distance("topdown", "topDown"), 1);
        assert_eq!(distance("tp", "topDown"), 5);
        assert_eq!(distance("", "abc"), 3);
    }

    #[test]
    fn suggestions_prefer_the_closest_and_skip_far_ones() {
        let names = ["topDown", "bottomUp", "try", "repeat"];
        assert_eq!(closest("topDwon", names.into_iter()), ["topDown"]);
        assert_eq!(closest("tyr", names.into_iter()), ["try"]);
        assert!(closest("xyz", names.into_iter()).is_empty());
        assert_eq!(closest("repaet", names.into_iter()), ["repeat"]);
    }

    #[test]
    fn at_most_three_closest_first() {
        let names = ["mapA", "mapB", "map", "mapC", "mapD", "map"];
        assert_eq!(closest("mapx", names.into_iter()), ["map", "mapA", "mapB"]);
        assert_eq!(
            did_you_mean("mapx", names.into_iter()).as_deref(),
            Some("did you mean `map`, `mapA` or `mapB`?")
        );
        assert_eq!(
            did_you_mean("tile2", ["tile", "tileND"].into_iter()).as_deref(),
            Some("did you mean `tile` or `tileND`?")
        );
        assert_eq!(did_you_mean("zzz", ["tile"].into_iter()), None);
    }
}
