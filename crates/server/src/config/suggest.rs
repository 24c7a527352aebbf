//! "Did you mean": the closest known key to a key nobody knows, by edit distance.
//!
//! The candidates are every name (and alias) of the key table ([`super::keys::names`]), so
//! a key added to the table is suggested without a second list to keep in step.

use super::keys;

/// The closest known key (used, refused or ignored), if close enough to be a typo: at most
/// two edits, or one edit per six characters of a long name.
pub(super) fn suggest(key: &str) -> Option<&'static str> {
    keys::names()
        .map(|k| (edit_distance(key, k), k))
        .filter(|(d, k)| *d <= 2.max(k.len() / 6))
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            cur[j + 1] = (prev[j] + cost).min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_works() {
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(
            suggest("native_transport_prot"),
            Some("native_transport_port")
        );
        assert_eq!(suggest("zzzz"), None);
    }

    /// The suggestions come from the key table: every name and alias in it is its own best
    /// suggestion, and nothing outside it is ever suggested.
    #[test]
    fn suggestions_are_the_key_table() {
        for name in keys::names() {
            assert_eq!(suggest(name), Some(name), "{name}");
        }
        for probe in ["clustr_name", "hinted_handof_enabled", "rpc_adress", "audi"] {
            let s = suggest(probe).unwrap_or_else(|| panic!("no suggestion for {probe}"));
            assert!(
                keys::lookup(s).is_some(),
                "{s} suggested but not in the table"
            );
        }
    }
}
