//! Stage `catalog`: compiles the tool catalog (input and output schemas) once per version, and
//! reports schemas that cannot be used once, as operator faults.

use serde_json::Value;
use std::collections::HashSet;
use toolwarden_core::catalog::Catalog;

#[derive(Default)]
pub struct CatalogStage {
    definitions: Vec<Value>,
    compiled: Option<Catalog>,
    /// Problems already logged: a client listing tools again must not repeat them.
    reported: HashSet<String>,
}

impl CatalogStage {
    pub fn install(&mut self, tools: Vec<Value>) {
        let catalog = Catalog::from_tools(&tools);
        for problem in catalog.problems() {
            let problem = problem.to_string();
            if !self.reported.contains(&problem) {
                tracing::error!(problem = %problem, "the server's tool catalog has a problem");
                self.reported.insert(problem);
            }
        }
        self.compiled = Some(catalog);
        self.definitions = tools;
    }

    pub fn compiled(&self) -> Option<&Catalog> {
        self.compiled.as_ref()
    }

    pub fn definitions(&self) -> &[Value] {
        &self.definitions
    }
}
