//! Did-you-mean suggestions and the discovery tools a not-found failure can point at.
//!
//! Candidates are always names the server defined (parameters, tools); the wanted name is only
//! compared with them, never returned.

/// Below this similarity a candidate is noise rather than a suggestion.
const MIN_SIMILARITY: f64 = 0.8;

/// The known names closest to `wanted`, best first, at most `max`. Comparison ignores case and
/// word separators (`userId` matches `user_id`), and a name that shares its words with the
/// wanted one counts as close (`file_path` -> `path`).
pub fn nearest<'a>(
    wanted: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    let wanted_words = words(wanted);
    let wanted_flat: String = wanted_words.concat();
    if wanted_flat.is_empty() {
        return Vec::new();
    }
    let mut scored: Vec<(f64, &'a str)> = candidates
        .into_iter()
        .filter_map(|candidate| {
            let score = similarity(&wanted_words, &wanted_flat, candidate);
            (score >= MIN_SIMILARITY).then_some((score, candidate))
        })
        .collect();
    scored.sort_by(|(left_score, left), (right_score, right)| {
        right_score
            .total_cmp(left_score)
            .then_with(|| left.cmp(right))
    });
    scored.dedup_by(|(_, left), (_, right)| left == right);
    scored.into_iter().take(max).map(|(_, name)| name).collect()
}

fn similarity(wanted_words: &[String], wanted_flat: &str, candidate: &str) -> f64 {
    let candidate_words = words(candidate);
    let candidate_flat: String = candidate_words.concat();
    if candidate_flat.is_empty() {
        return 0.0;
    }
    if candidate_flat == wanted_flat {
        return 1.0;
    }
    // A name made of a subset of the other's words is the same parameter with more or less
    // qualification (`file_path` for `path`, `id` for `user_id`).
    let subset = |small: &[String], large: &[String]| {
        !small.is_empty() && small.iter().all(|word| large.contains(word))
    };
    if subset(&candidate_words, wanted_words) || subset(wanted_words, &candidate_words) {
        return 0.9;
    }
    let edits = strsim::damerau_levenshtein(wanted_flat, &candidate_flat);
    let longest = wanted_flat
        .chars()
        .count()
        .max(candidate_flat.chars().count());
    // Short names are all a couple of edits apart; only a single slip counts there.
    if longest <= 4 {
        return if edits <= 1 { 0.85 } else { 0.0 };
    }
    let by_edits = strsim::normalized_damerau_levenshtein(wanted_flat, &candidate_flat);
    let by_prefix = strsim::jaro_winkler(wanted_flat, &candidate_flat);
    if edits <= 2 {
        by_edits.max(by_prefix).max(MIN_SIMILARITY)
    } else {
        by_edits.max(by_prefix - 0.1)
    }
}

/// Lower-cased words of a name in any of snake_case, kebab-case, dotted or camelCase.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// Verbs of tools that let a model find what exists.
const DISCOVERY_VERBS: [&str; 4] = ["list", "search", "find", "query"];

/// The tools whose names say they list or search things (`list_users`, `searchFiles`,
/// `get_users`), in the order given. A server-identifier prefix (`github.list_issues`) is
/// ignored when reading the name.
pub fn discovery_tools<'a>(names: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    names
        .into_iter()
        .filter(|name| is_discovery(name))
        .collect()
}

fn is_discovery(name: &str) -> bool {
    let own = name.rsplit(['.', '/']).next().unwrap_or(name);
    let words = words(own);
    let Some(first) = words.first() else {
        return false;
    };
    if DISCOVERY_VERBS.contains(&first.as_str()) {
        return true;
    }
    first == "get" && words.len() >= 2 && words.last().is_some_and(|last| is_plural(last))
}

fn is_plural(word: &str) -> bool {
    // `status`, `address`, `analysis`: an `s` ending that is not a plural.
    word.len() > 2 && word.ends_with('s') && !["ss", "us", "is"].iter().any(|e| word.ends_with(e))
}

#[cfg(test)]
mod tests {
    use super::*;

    const PARAMETERS: [&str; 5] = ["path", "user_id", "content", "max_results", "encoding"];

    #[test]
    fn typos_case_and_separators_find_the_parameter() {
        assert_eq!(nearest("pathh", PARAMETERS, 3), vec!["path"]);
        assert_eq!(nearest("Path", PARAMETERS, 3), vec!["path"]);
        assert_eq!(nearest("file_path", PARAMETERS, 3), vec!["path"]);
        assert_eq!(nearest("userId", PARAMETERS, 3), vec!["user_id"]);
        assert_eq!(nearest("maxResult", PARAMETERS, 3), vec!["max_results"]);
        assert_eq!(nearest("contnet", PARAMETERS, 3), vec!["content"]);
        assert_eq!(nearest("encodng", PARAMETERS, 3), vec!["encoding"]);
    }

    #[test]
    fn unrelated_names_suggest_nothing() {
        assert!(nearest("wait_for_previous", PARAMETERS, 3).is_empty());
        assert!(nearest("zzz", PARAMETERS, 3).is_empty());
        assert!(nearest("", PARAMETERS, 3).is_empty());
        assert!(nearest("query", PARAMETERS, 3).is_empty());
    }

    #[test]
    fn best_matches_come_first_and_max_is_respected() {
        let tools = ["get_user", "get_users", "delete_user", "list_users"];
        assert_eq!(nearest("get_usr", tools, 1), vec!["get_user"]);
        assert_eq!(nearest("get_usr", tools, 2), vec!["get_user", "get_users"]);
        assert!(nearest("get_usr", tools, 0).is_empty());
    }

    #[test]
    fn discovery_tools_are_found_by_their_verbs() {
        let names = [
            "list_users",
            "searchFiles",
            "find-issue",
            "query_logs",
            "get_users",
            "getRepositories",
            "get_user",
            "get_status",
            "get_address",
            "delete_users",
            "github.list_issues",
            "search",
            "listing_price",
        ];
        assert_eq!(
            discovery_tools(names),
            vec![
                "list_users",
                "searchFiles",
                "find-issue",
                "query_logs",
                "get_users",
                "getRepositories",
                "github.list_issues",
                "search",
            ]
        );
    }
}
