//! Stage `limit`: results over the size limit are cut in the middle (head and tail kept, the
//! hint lives in the last line), keeping `isError` and `_meta`.

use super::{Reply, Review};
use crate::envelope::Outcome;
use serde_json::Value;
use toolwarden_core::truncate::limit_result;

pub fn apply(review: &mut Review, outcome: Outcome<'_>, max_text_bytes: usize) {
    match &mut review.replacement {
        Some(Reply::Result(result)) => {
            limit_result(result, max_text_bytes);
        }
        Some(Reply::Error { .. }) => {}
        None => {
            let Outcome::Result(raw) = outcome else {
                return;
            };
            // The text inside a result is never longer than the result's JSON.
            if raw.get().len() <= max_text_bytes {
                return;
            }
            let Ok(mut result) = serde_json::from_str::<Value>(raw.get()) else {
                return;
            };
            if let Some(cut) = limit_result(&mut result, max_text_bytes) {
                tracing::info!(
                    bytes_before = cut.bytes_before,
                    bytes_after = cut.bytes_after,
                    "cut an oversized tool result"
                );
                review.replacement = Some(Reply::Result(result));
            }
        }
    }
}
