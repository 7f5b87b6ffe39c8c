//! Size limits that keep an error an error: oversized texts lose their middle, never their
//! head (what failed) nor their last line (the `Hint:`), and a result's `isError` and `_meta`
//! are never touched (DESIGN.md 1.1, "Size limits keep the error flag").

use std::borrow::Cow;

use serde_json::Value;

/// What `limit_result` cut, for the log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Truncation {
    /// Total bytes of text in the result before the cut.
    pub bytes_before: usize,
    /// Total bytes of text after it, markers included.
    pub bytes_after: usize,
    /// How many text items were shortened.
    pub items_cut: usize,
}

/// Keeps at most `max_bytes` of `text`: its head, a marker saying how much was cut, and its
/// tail. The tail holds at least a third of the room, and the whole last line when that line
/// fits in two thirds of it, so a closing `Hint:` line survives.
///
/// When `max_bytes` cannot even hold the marker (under about 50 bytes), the result is the
/// longest head of `text` that fits, without a marker: the limit is never exceeded.
/// Cuts fall on UTF-8 character boundaries; a combining mark may be parted from its base.
pub fn truncate_middle(text: &str, max_bytes: usize) -> Cow<'_, str> {
    let total = text.len();
    if total <= max_bytes {
        return Cow::Borrowed(text);
    }
    // `cut <= total`, so a marker written with `total` in both places is the longest it gets.
    let marker_room = marker(total, total).len();
    let Some(budget) = max_bytes.checked_sub(marker_room) else {
        let head = text.get(..text.floor_char_boundary(max_bytes));
        return Cow::Owned(head.unwrap_or_default().to_owned());
    };

    let tail_start = text.ceil_char_boundary(total - tail_length(text, budget));
    let head_end = text.floor_char_boundary(budget - (total - tail_start));
    let cut = tail_start - head_end;

    let mut kept = String::with_capacity(max_bytes);
    kept.push_str(text.get(..head_end).unwrap_or_default());
    kept.push_str(&marker(cut, total));
    kept.push_str(text.get(tail_start..).unwrap_or_default());
    Cow::Owned(kept)
}

/// How many bytes of the end of `text` to keep, out of `budget` bytes of room.
fn tail_length(text: &str, budget: usize) -> usize {
    let base = budget / 3;
    let body = text.strip_suffix('\n').unwrap_or(text);
    let Some(last_newline) = body.rfind('\n') else {
        return base;
    };
    let last_line_start = last_newline + 1;
    let last_line = text.len() - last_line_start;
    if last_line > base {
        return if last_line <= budget * 2 / 3 {
            last_line
        } else {
            base
        };
    }
    // The last line fits: begin the tail at a line start when one is near, so it does not
    // open on half a word.
    let window_start = text.len() - base;
    let half_window = window_start + base / 2;
    let before_last_line = text.as_bytes().get(window_start..last_line_start);
    match before_last_line.and_then(|bytes| bytes.iter().position(|&byte| byte == b'\n')) {
        Some(offset) if window_start + offset < half_window => base - offset - 1,
        _ => base,
    }
}

fn marker(cut: usize, total: usize) -> String {
    format!(
        "\n[... toolwarden cut {} bytes of {} ...]\n",
        with_thousands(cut),
        with_thousands(total)
    )
}

fn with_thousands(number: usize) -> String {
    let digits = number.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3);
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

/// Limits the total text of a `CallToolResult` (its `text` items and the text of embedded
/// `resource` items) to `max_text_bytes`. The largest items are cut first, down to a common
/// size, so a short error text beside a huge dump stays whole. Returns `None` when the result
/// was under the limit and is unchanged.
pub fn limit_result(result: &mut Value, max_text_bytes: usize) -> Option<Truncation> {
    let mut slots = text_slots(result);
    let lengths: Vec<usize> = slots.iter().map(|slot| slot.len()).collect();
    let bytes_before: usize = lengths.iter().sum();
    if bytes_before <= max_text_bytes {
        return None;
    }
    let cap = common_cap(&lengths, max_text_bytes);
    let mut items_cut = 0;
    for slot in slots.iter_mut().filter(|slot| slot.len() > cap) {
        let shortened = truncate_middle(slot, cap).into_owned();
        **slot = shortened;
        items_cut += 1;
    }
    Some(Truncation {
        bytes_before,
        bytes_after: slots.iter().map(|slot| slot.len()).sum(),
        items_cut,
    })
}

/// The largest size `cap` such that cutting every item longer than `cap` down to `cap` brings
/// the total within `limit`.
fn common_cap(lengths: &[usize], limit: usize) -> usize {
    let total_with = |cap: usize| -> usize { lengths.iter().map(|&len| len.min(cap)).sum() };
    let (mut low, mut high) = (0, lengths.iter().copied().max().unwrap_or(0));
    while low < high {
        let middle = low + (high - low).div_ceil(2);
        if total_with(middle) <= limit {
            low = middle;
        } else {
            high = middle - 1;
        }
    }
    low
}

fn text_slots(result: &mut Value) -> Vec<&mut String> {
    let Some(content) = result.get_mut("content").and_then(Value::as_array_mut) else {
        return Vec::new();
    };
    content
        .iter_mut()
        .filter_map(|item| {
            let item = item.as_object_mut()?;
            let text = match item.get("type").and_then(Value::as_str) {
                Some("text") => item.get_mut("text"),
                Some("resource") => item.get_mut("resource")?.get_mut("text"),
                _ => None,
            };
            match text {
                Some(Value::String(text)) => Some(text),
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn short_text_is_borrowed_unchanged() {
        assert!(matches!(
            truncate_middle("short", 100),
            Cow::Borrowed("short")
        ));
        assert!(matches!(
            truncate_middle("exact", 5),
            Cow::Borrowed("exact")
        ));
    }

    #[test]
    fn long_text_keeps_head_marker_and_tail_within_the_limit() {
        let text = "a".repeat(1_500_000);
        let kept = truncate_middle(&text, 1_000);
        assert!(kept.len() <= 1_000);
        assert!(kept.starts_with("aaaa"));
        assert!(kept.ends_with("aaaa"));
        assert!(kept.contains(" bytes of 1,500,000 ...]\n"));
        let cut_text = kept
            .split("cut ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap()
            .replace(',', "");
        let cut: usize = cut_text.parse().unwrap();
        let marker_len = marker(cut, text.len()).len();
        assert_eq!(kept.len() - marker_len + cut, text.len());
    }

    #[test]
    fn the_hint_line_survives() {
        let text = format!(
            "Query failed.\n{}\nHint: Call `list_tables` first.",
            "row data ".repeat(10_000)
        );
        let kept = truncate_middle(&text, 400);
        assert!(kept.len() <= 400);
        assert!(kept.starts_with("Query failed.\n"));
        assert!(kept.ends_with("\nHint: Call `list_tables` first."));
    }

    #[test]
    fn the_tail_starts_on_a_line_when_one_is_near() {
        let mut text = "x".repeat(5_000);
        text.push_str("\nsecond to last\nlast");
        let kept = truncate_middle(&text, 150);
        assert!(kept.ends_with("...]\nsecond to last\nlast"), "{kept}");
    }

    #[test]
    fn cuts_fall_on_char_boundaries() {
        let text = "é😀ü".repeat(1_000);
        for limit in [60, 61, 62, 63, 100, 1_001] {
            let kept = truncate_middle(&text, limit);
            assert!(kept.len() <= limit);
            assert!(text.starts_with(kept.split('\n').next().unwrap()));
        }
    }

    #[test]
    fn a_limit_too_small_for_the_marker_keeps_a_bare_head() {
        let text = "abcdefghijklmnopqrstuvwxyz0123456789".repeat(10);
        let kept = truncate_middle(&text, 10);
        assert_eq!(kept, "abcdefghij");
    }

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(with_thousands(0), "0");
        assert_eq!(with_thousands(999), "999");
        assert_eq!(with_thousands(1_000), "1,000");
        assert_eq!(with_thousands(1_234_567), "1,234,567");
    }

    #[test]
    fn results_under_the_limit_are_untouched() {
        let mut result = json!({"content": [{"type": "text", "text": "fine"}], "isError": true});
        let before = result.clone();
        assert_eq!(limit_result(&mut result, 100), None);
        assert_eq!(result, before);
    }

    #[test]
    fn the_largest_items_are_cut_first_and_flags_survive() {
        let big = "B".repeat(10_000);
        let mut result = json!({
            "content": [
                {"type": "text", "text": "Small error.\nHint: retry later."},
                {"type": "image", "data": "AAAA".repeat(5_000), "mimeType": "image/png"},
                {"type": "resource", "resource": {"uri": "file:///x", "text": big}},
            ],
            "isError": true,
            "_meta": {"vendor/trace": "abc"},
        });
        let truncation = limit_result(&mut result, 1_000).unwrap();
        assert_eq!(truncation.bytes_before, 10_000 + 31);
        assert!(truncation.bytes_after <= 1_000);
        assert_eq!(truncation.items_cut, 1);
        assert_eq!(
            result["content"][0]["text"],
            "Small error.\nHint: retry later."
        );
        assert_eq!(result["content"][1]["data"].as_str().unwrap().len(), 20_000);
        assert_eq!(result["content"][2]["resource"]["uri"], "file:///x");
        assert!(
            result["content"][2]["resource"]["text"]
                .as_str()
                .unwrap()
                .len()
                < 1_000
        );
        assert_eq!(result["isError"], true);
        assert_eq!(result["_meta"], json!({"vendor/trace": "abc"}));
    }

    #[test]
    fn equal_items_share_the_room() {
        let mut result = json!({"content": [
            {"type": "text", "text": "x".repeat(1_000)},
            {"type": "text", "text": "y".repeat(1_000)},
        ]});
        let truncation = limit_result(&mut result, 600).unwrap();
        assert_eq!(truncation.items_cut, 2);
        assert!(truncation.bytes_after <= 600);
        for item in result["content"].as_array().unwrap() {
            assert!(item["text"].as_str().unwrap().len() <= 300);
        }
    }

    #[test]
    fn common_cap_is_the_largest_that_fits() {
        assert_eq!(common_cap(&[10, 100, 1_000], 310), 200);
        assert_eq!(common_cap(&[10, 100, 1_000], 309), 199);
        assert_eq!(common_cap(&[10, 10], 5), 2);
        assert_eq!(common_cap(&[], 5), 0);
    }
}
