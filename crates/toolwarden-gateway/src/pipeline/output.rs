//! Stage `output`: a success whose `structuredContent` breaks the tool's `outputSchema` would
//! make the client fail the whole call; it becomes an `output_invalid` error result instead.

use super::{Reply, Review};
use crate::envelope::Outcome;
use serde::Deserialize;
use serde_json::Value;
use toolwarden_core::catalog::CatalogTool;

#[derive(Deserialize)]
struct Structured {
    #[serde(rename = "structuredContent")]
    structured_content: Option<Value>,
}

pub fn review(tool: &CatalogTool, outcome: Outcome<'_>, review: Review) -> Review {
    let Outcome::Result(result) = outcome else {
        return review;
    };
    if tool.output_validator().is_none()
        || memchr::memmem::find(result.get().as_bytes(), b"\"structuredContent\"").is_none()
    {
        return review;
    }
    let Ok(Structured {
        structured_content: Some(structured),
    }) = serde_json::from_str::<Structured>(result.get())
    else {
        return review;
    };
    let issues = tool.check_output(&structured);
    if issues.is_empty() {
        return review;
    }
    let failure = tool.output_invalid(issues);
    Review {
        replacement: Some(Reply::Result(failure.to_call_result(None))),
        failure: Some(failure),
    }
}
