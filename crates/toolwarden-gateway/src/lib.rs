//! The toolwarden gateway.
