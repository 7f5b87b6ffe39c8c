//! The toolwarden engine: pure functions from data to data. Nothing here knows about tokio,
//! pipes or HTTP; the gateway moves bytes and asks this crate what to do with them.

pub mod contract;
pub mod pin;
pub mod scan;
