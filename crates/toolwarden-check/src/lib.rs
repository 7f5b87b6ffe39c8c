//! `toolwarden check`: starts an MCP server, sends it the bad calls real agents make, and grades
//! how it answers. The probe talks to the server, the battery decides which calls to send, the
//! grading turns what came back into named pass/fail/n/a results, and the report renders them.

pub mod battery;
pub mod checks;
pub mod marker;
pub mod probe;
pub mod report;
pub mod runner;
