//! The toolwarden engine: pure functions from data to data. Nothing here knows about tokio,
//! pipes or HTTP; the gateway moves bytes and asks this crate what to do with them.

pub mod call;
pub mod catalog;
pub mod classify;
pub mod config;
pub mod contract;
pub mod pin;
pub mod policy;
pub mod redact;
pub mod scan;
pub mod suggest;
pub mod truncate;
pub mod upstream;
pub mod validate;
