//! Fusion rules as data: the files of `fusion-rules/` (embedded at build time,
//! or read from `PK_FUSION_RULES=<dir>`), minus those `PK_FUSION_DISABLE`
//! names. A rule carries policy only: which relation and launch kinds fuse,
//! optional policy predicates, and limits. The engine's invariants
//! (`invariants.rs`) hold whatever a rule says. Files are parsed into typed
//! values; an unknown key or a wrong type is an error naming file and key.
use super::invariants::is_invariant;
use super::legality::{self, Check};
use crate::errors::{PkError, PkResult};
use crate::types::Pattern;
use serde::Deserialize;
use std::path::Path;
use std::sync::OnceLock;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Relation {
    /// The later launch reads or writes what the earlier one touched.
    Dependent,
    Independent,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    For,
    Reduce,
}

impl Kind {
    pub fn matches(self, p: Pattern) -> bool {
        matches!(
            (self, p),
            (Kind::For, Pattern::For) | (Kind::Reduce, Pattern::Reduce)
        ) || (self == Kind::Reduce && matches!(p, Pattern::Reducer(r) if r.fields().is_empty()))
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    pub max_launches: usize,
    pub max_statements: usize,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub name: String,
    #[serde(default)]
    pub summary: String,
    pub relation: Relation,
    pub first: Vec<Kind>,
    pub second: Vec<Kind>,
    /// Policy predicates (`host_space`); engine invariants may be listed too.
    #[serde(default)]
    pub requires: Vec<String>,
    pub limits: Limits,
    /// The policy predicates of `requires`, resolved once at load.
    #[serde(skip)]
    pub policy: Vec<(String, Check)>,
}

/// Predicates a rule may add to the engine's invariants.
pub const POLICY: &[(&str, Check)] = &[("host_space", legality::host_space)];

pub fn parse(origin: &str, text: &str) -> PkResult<Rule> {
    let bad = |m: String| PkError::Environment(format!("fusion rule {origin}: {m}"));
    let mut rule: Rule = toml::from_str(text).map_err(|e| bad(e.to_string()))?;
    for p in &rule.requires {
        match POLICY.iter().find(|(n, _)| n == p) {
            Some((n, f)) => rule.policy.push((n.to_string(), *f)),
            None if is_invariant(p) => {}
            None => {
                let known: Vec<&str> = POLICY.iter().map(|(n, _)| *n).collect();
                return Err(bad(format!(
                    "key 'requires': unknown predicate '{p}' (policy predicates: {}; the engine's invariants always hold)",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(rule)
}

const DEFAULTS: &[(&str, &str)] = &[
    (
        "vertical",
        include_str!("../../fusion-rules/vertical/rule.toml"),
    ),
    (
        "reduction_epilogue",
        include_str!("../../fusion-rules/reduction_epilogue/rule.toml"),
    ),
    (
        "horizontal",
        include_str!("../../fusion-rules/horizontal/rule.toml"),
    ),
];

/// The built-in rule files: (folder name, rule.toml text).
pub fn default_files() -> &'static [(&'static str, &'static str)] {
    DEFAULTS
}

fn read_dir(dir: &Path) -> PkResult<Vec<Rule>> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| PkError::Environment(format!("PK_FUSION_RULES={}: {e}", dir.display())))?
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("rule.toml"))
        .filter(|p| p.is_file())
        .collect();
    entries.sort();
    let mut rules = Vec::new();
    for p in entries {
        let text = std::fs::read_to_string(&p)?;
        rules.push(parse(&p.display().to_string(), &text)?);
    }
    Ok(rules)
}

fn load() -> PkResult<Vec<Rule>> {
    let cfg = crate::config::get();
    let mut rules = match &cfg.rules_dir {
        Some(dir) => read_dir(dir)?,
        None => DEFAULTS
            .iter()
            .map(|(name, text)| parse(name, text))
            .collect::<PkResult<_>>()?,
    };
    rules.retain(|r| !cfg.is_disabled(&r.name));
    Ok(rules)
}

/// The names of every rule of the active source (`PK_FUSION_RULES` or the
/// built-in files), those switched off included.
pub fn all_names() -> PkResult<Vec<String>> {
    let cfg = crate::config::get();
    let rules = match &cfg.rules_dir {
        Some(dir) => read_dir(dir)?,
        None => defaults(),
    };
    Ok(rules.into_iter().map(|r| r.name).collect())
}

static RULES: OnceLock<Result<Vec<Rule>, String>> = OnceLock::new();

/// The active rules (read once per process).
pub fn active() -> PkResult<&'static [Rule]> {
    RULES
        .get_or_init(|| load().map_err(|e| e.to_string()))
        .as_ref()
        .map(|v| v.as_slice())
        .map_err(|e| PkError::Environment(e.clone()))
}

/// The built-in rules (for tests and tools).
pub fn defaults() -> Vec<Rule> {
    DEFAULTS
        .iter()
        .map(|(name, text)| parse(name, text).expect("built-in rules parse"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "name='x'\nrelation='dependent'\nfirst=['for']\nsecond=['for']\n[limits]\nmax_launches=2\nmax_statements=10\n";

    #[test]
    fn embedded_rules_parse() {
        for (name, text) in DEFAULTS {
            assert_eq!(&parse(name, text).unwrap().name, name);
        }
    }

    #[test]
    fn a_rule_needs_no_invariants_listed() {
        let r = parse("x", GOOD).unwrap();
        assert_eq!(r.relation, Relation::Dependent);
        assert!(r.policy.is_empty());
    }

    #[test]
    fn unknown_predicate_is_rejected_naming_file_and_key() {
        let t = GOOD.replace("[limits]", "requires=['magic']\n[limits]");
        let e = parse("rules/x/rule.toml", &t).unwrap_err().to_string();
        assert!(
            e.contains("rules/x/rule.toml") && e.contains("'requires'") && e.contains("'magic'"),
            "{e}"
        );
    }

    #[test]
    fn unknown_keys_are_rejected() {
        let t = GOOD.replace("[limits]", "requirez=['host_space']\n[limits]");
        let e = parse("f.toml", &t).unwrap_err().to_string();
        assert!(e.contains("f.toml") && e.contains("requirez"), "{e}");
        let t = GOOD.replace("max_statements=10", "max_statements=10\nmax_bytes=3");
        assert!(parse("f.toml", &t)
            .unwrap_err()
            .to_string()
            .contains("max_bytes"));
    }

    #[test]
    fn wrong_types_and_values_are_rejected() {
        let t = GOOD.replace("max_launches=2", "max_launches='two'");
        assert!(parse("f.toml", &t)
            .unwrap_err()
            .to_string()
            .contains("max_launches"));
        let t = GOOD.replace("'dependent'", "'sideways'");
        assert!(parse("f.toml", &t)
            .unwrap_err()
            .to_string()
            .contains("sideways"));
        let t = GOOD.replace("second=['for']", "second=['scan']");
        assert!(parse("f.toml", &t)
            .unwrap_err()
            .to_string()
            .contains("scan"));
    }
}
