//! Properties of middle truncation: any text and any limit give valid UTF-8 within the limit,
//! made of a head and a tail of the input around one marker; results keep their error flag,
//! their `_meta` and the closing hint line.

use proptest::prelude::*;
use serde_json::{Value, json};
use toolwarden_core::truncate::{limit_result, truncate_middle};

const MARKER_START: &str = "\n[... toolwarden cut ";
const MARKER_END: &str = " ...]\n";

/// Text mixing ASCII, multi-byte letters, emoji, combining marks and newlines.
fn mixed_text(max_chars: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::char::range('a', 'z'),
            1 => Just('\n'),
            1 => Just(' '),
            1 => prop::sample::select(vec!['é', 'ß', 'Ж', '日', '本', 'ع']),
            1 => prop::sample::select(vec!['😀', '🦀', '👍', '🏳']),
            1 => prop::sample::select(vec!['\u{301}', '\u{308}', '\u{200d}', '\u{fe0f}']),
        ],
        0..max_chars,
    )
    .prop_map(|chars| chars.into_iter().collect())
}

fn any_text() -> impl Strategy<Value = String> {
    prop_oneof![mixed_text(3_000), any::<String>()]
}

/// Splits a truncated text into its head, the cut count and its tail.
fn parts(kept: &str) -> Option<(&str, usize, &str)> {
    let start = kept.find(MARKER_START)?;
    let after_start = &kept[start + MARKER_START.len()..];
    let end = after_start.find(MARKER_END)?;
    let cut_text = after_start[..end].split(' ').next()?;
    let cut = cut_text.replace(',', "").parse().ok()?;
    Some((&kept[..start], cut, &after_start[end + MARKER_END.len()..]))
}

proptest! {
    #[test]
    fn truncation_stays_within_the_limit_and_keeps_head_and_tail(
        text in any_text(),
        limit in 0usize..4_000,
    ) {
        let kept = truncate_middle(&text, limit);
        prop_assert!(std::str::from_utf8(kept.as_bytes()).is_ok());
        prop_assert!(kept.len() <= limit, "{} > {}", kept.len(), limit);
        if text.len() <= limit {
            prop_assert_eq!(kept.as_ref(), text.as_str());
        } else if let Some((head, cut, tail)) = parts(&kept) {
            prop_assert!(text.starts_with(head));
            prop_assert!(text.ends_with(tail));
            prop_assert_eq!(head.len() + cut + tail.len(), text.len());
        } else {
            // Too little room for the marker: a bare head.
            prop_assert!(limit < 64);
            prop_assert!(text.starts_with(kept.as_ref()));
        }
    }

    #[test]
    fn a_short_last_line_survives(
        body in mixed_text(5_000),
        hint in "[A-Za-z `_]{1,40}",
        limit in 200usize..2_000,
    ) {
        let text = format!("{body}\nHint: {hint}");
        let kept = truncate_middle(&text, limit);
        let last_line = format!("\nHint: {hint}");
        prop_assert!(kept.ends_with(&last_line), "{:?}", kept);
    }

    #[test]
    fn results_keep_flag_meta_other_items_and_the_hint(
        bodies in prop::collection::vec(mixed_text(4_000), 1..4),
        hint in "[A-Za-z `_]{1,40}",
        is_error in any::<bool>(),
        meta_note in mixed_text(200),
        limit in 600usize..5_000,
    ) {
        let mut content: Vec<Value> = bodies
            .iter()
            .map(|body| json!({"type": "text", "text": body}))
            .collect();
        content.insert(0, json!({"type": "image", "data": "QUJD".repeat(500), "mimeType": "image/png"}));
        content.push(json!({"type": "resource", "resource": {"uri": "file:///log", "text": bodies[0]}}));
        let last_text = format!("{}\nHint: {hint}", bodies[bodies.len() - 1]);
        content.push(json!({"type": "text", "text": last_text}));
        let mut result = json!({
            "content": content,
            "isError": is_error,
            "_meta": {"vendor/note": meta_note, "toolwarden/error": {"kind": "upstream_error"}},
        });
        let before = result.clone();
        let texts_before: usize = text_lengths(&before).iter().sum();
        let truncation = limit_result(&mut result, limit);

        prop_assert_eq!(&result["isError"], &before["isError"]);
        prop_assert_eq!(&result["_meta"], &before["_meta"]);
        prop_assert_eq!(&result["content"][0], &before["content"][0]);
        prop_assert_eq!(
            &result["content"].as_array().map(Vec::len),
            &before["content"].as_array().map(Vec::len)
        );
        let texts_after: usize = text_lengths(&result).iter().sum();
        prop_assert!(texts_after <= limit);
        match truncation {
            None => {
                prop_assert!(texts_before <= limit);
                prop_assert_eq!(&result, &before);
            }
            Some(truncation) => {
                prop_assert_eq!(truncation.bytes_before, texts_before);
                prop_assert_eq!(truncation.bytes_after, texts_after);
                prop_assert!(truncation.items_cut >= 1);
            }
        }
        let last = result["content"].as_array().and_then(|items| items.last());
        let last_text = last.and_then(|item| item["text"].as_str()).unwrap_or_default();
        let hint_line = format!("\nHint: {hint}");
        prop_assert!(last_text.ends_with(&hint_line));
    }
}

fn text_lengths(result: &Value) -> Vec<usize> {
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|item| match item["type"].as_str() {
            Some("text") => item["text"].as_str(),
            Some("resource") => item["resource"]["text"].as_str(),
            _ => None,
        })
        .map(str::len)
        .collect()
}
