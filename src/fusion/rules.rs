//! Fusion rules as data: the files of `fusion-rules/` (embedded at build time,
//! or read from `PK_FUSION_RULES=<dir>`), minus those `PK_FUSION_DISABLE` names.
use crate::errors::{PkError, PkResult};
use std::sync::OnceLock;

#[derive(Clone, Debug, serde::Deserialize)]
pub struct Limits {
    pub max_launches: usize,
    pub max_statements: usize,
}

#[derive(Clone, Debug, serde::Deserialize)]
pub struct Rule {
    pub name: String,
    #[serde(default)]
    pub summary: String,
    /// "dependent" or "independent".
    pub relation: String,
    pub first: Vec<String>,
    pub second: Vec<String>,
    pub requires: Vec<String>,
    pub limits: Limits,
    /// `requires`, resolved once when the rule is loaded.
    #[serde(skip)]
    pub preds: Vec<Pred>,
}

/// The legality predicates (see `legality.rs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pred {
    SameSpace,
    HostSpace,
    OneDimensional,
    SameRange,
    NoScan,
    WorkIndexAccess,
}

fn pred(name: &str) -> Option<Pred> {
    Some(match name {
        "same_space" => Pred::SameSpace,
        "host_space" => Pred::HostSpace,
        "one_dimensional" => Pred::OneDimensional,
        "same_range" => Pred::SameRange,
        "no_scan" => Pred::NoScan,
        "work_index_access" => Pred::WorkIndexAccess,
        _ => return None,
    })
}

/// The predicates a rule may require (implemented in `legality.rs`).
pub const PREDICATES: &[&str] = &[
    "same_space",
    "host_space",
    "one_dimensional",
    "same_range",
    "no_scan",
    "work_index_access",
];

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

pub fn parse(origin: &str, text: &str) -> PkResult<Rule> {
    let mut rule: Rule = toml::from_str(text)
        .map_err(|e| PkError::Environment(format!("fusion rule {origin}: {e}")))?;
    if !["dependent", "independent"].contains(&rule.relation.as_str()) {
        return Err(PkError::Environment(format!(
            "fusion rule {origin}: relation must be 'dependent' or 'independent'"
        )));
    }
    for p in &rule.requires {
        if let Some(x) = pred(p) {
            rule.preds.push(x);
        } else {
            return Err(PkError::Environment(format!(
                "fusion rule {origin}: unknown predicate '{p}' (known: {})",
                PREDICATES.join(", ")
            )));
        }
    }
    for k in rule.first.iter().chain(&rule.second) {
        if k != "for" && k != "reduce" {
            return Err(PkError::Environment(format!(
                "fusion rule {origin}: launch kinds are 'for' and 'reduce', not '{k}'"
            )));
        }
    }
    Ok(rule)
}

fn load() -> PkResult<Vec<Rule>> {
    let mut rules = Vec::new();
    match std::env::var_os("PK_FUSION_RULES") {
        Some(dir) => {
            let mut entries: Vec<_> = std::fs::read_dir(&dir)
                .map_err(|e| {
                    PkError::Environment(format!("PK_FUSION_RULES={}: {e}", dir.to_string_lossy()))
                })?
                .filter_map(|e| e.ok())
                .map(|e| e.path().join("rule.toml"))
                .filter(|p| p.is_file())
                .collect();
            entries.sort();
            for p in entries {
                let text = std::fs::read_to_string(&p)?;
                rules.push(parse(&p.display().to_string(), &text)?);
            }
        }
        None => {
            for (name, text) in DEFAULTS {
                rules.push(parse(name, text)?);
            }
        }
    }
    let disabled: Vec<String> = std::env::var("PK_FUSION_DISABLE")
        .unwrap_or_default()
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    rules.retain(|r| !disabled.contains(&r.name));
    Ok(rules)
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

#[cfg(test)]
mod tests {
    #[test]
    fn embedded_rules_parse() {
        for (name, text) in super::DEFAULTS {
            let r = super::parse(name, text).unwrap();
            assert_eq!(&r.name, name);
        }
    }

    #[test]
    fn unknown_predicate_is_rejected() {
        let t = "name='x'\nrelation='dependent'\nfirst=['for']\nsecond=['for']\nrequires=['magic']\n[limits]\nmax_launches=2\nmax_statements=10\n";
        assert!(super::parse("x", t)
            .unwrap_err()
            .to_string()
            .contains("unknown predicate 'magic'"));
    }
}
