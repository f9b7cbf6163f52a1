//! The text forms of a flush's report: `text`, every shown launch on its own
//! line (history and `pk.explain(verbose=True)`), and `brief`, where alike
//! facts are stated once (`pk.explain()`, PK_FUSE_EXPLAIN=1): consecutive
//! launches of one call site on one line with their count, the rules that
//! joined them counted, allocation numbers as ranges, and the launches a
//! region deferred for the same reason as one line.
use super::{Flush, Why, MAX_TEXT_REGIONS, SHOWN, SHOWN_REFUSALS};
use std::fmt::Write;

/// `#1-#4, #7`: sorted allocation numbers with runs as ranges.
fn ranges(numbers: &[usize]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut k = 0;
    while k < sorted.len() {
        let mut e = k;
        while e + 1 < sorted.len() && sorted[e + 1] == sorted[e] + 1 {
            e += 1;
        }
        parts.push(if e > k {
            format!("#{}-#{}", sorted[k], sorted[e])
        } else {
            format!("#{}", sorted[k])
        });
        k = e + 1;
    }
    parts.join(", ")
}

/// ` (x8)` for a repeated line, nothing for one.
fn times(n: usize) -> String {
    if n > 1 {
        format!(" (x{n})")
    } else {
        String::new()
    }
}

impl Flush {
    /// The report with every shown launch on its own line.
    pub fn text(&self) -> String {
        self.render(false)
    }

    /// The report with alike facts stated once.
    pub fn brief(&self) -> String {
        self.render(true)
    }

    fn render(&self, brief: bool) -> String {
        let mut t = String::new();
        let count = self.sizes.len();
        let _ = writeln!(
            t,
            "flush: {} launch(es) -> {count} kernel(s)",
            self.launches
        );
        if count > MAX_TEXT_REGIONS {
            let _ = writeln!(
                t,
                "  ({count} regions; the first {MAX_TEXT_REGIONS} follow)"
            );
        }
        for r in 0..self.regions.len().min(MAX_TEXT_REGIONS) {
            self.region(&mut t, r, brief);
        }
        for (label, origin) in &self.overwritten {
            let _ = writeln!(
                t,
                "  dropped unrun: {label} at {}: nothing can read what it wrote (a later launch writes it all again, or it fed only such launches)",
                origin.site()
            );
        }
        if self.refusal_count > SHOWN_REFUSALS {
            let _ = writeln!(
                t,
                "  ({} refusals; the first {SHOWN_REFUSALS} follow)",
                self.refusal_count
            );
        }
        for f in &self.refusals {
            let _ = writeln!(
                t,
                "  not fused: {} at {} after {} at {}: rule '{}': {}",
                self.label(f.launch),
                self.site(f.launch),
                self.label(f.with),
                self.site(f.with),
                f.rule,
                f.reason
            );
        }
        t
    }

    fn region(&self, t: &mut String, r: usize, brief: bool) {
        let region = &self.regions[r];
        let len = self.sizes[r];
        let names: Vec<&str> = region.iter().take(SHOWN).map(|&k| self.label(k)).collect();
        let title = if brief && len > 1 && names.iter().all(|n| *n == names[0]) {
            format!("fused({len} launches of {})", names[0])
        } else if len > SHOWN {
            format!("fused({len} launches: {}+...)", names.join("+"))
        } else if len > 1 {
            format!("fused({})", names.join("+"))
        } else {
            names[0].to_string()
        };
        let _ = writeln!(t, "  region {r}: {title}");
        if len > SHOWN {
            let _ = writeln!(t, "    ({len} launches; the first {SHOWN} follow)");
        }
        let shown: Vec<usize> = region.iter().take(SHOWN).copied().collect();
        let mut k = 0;
        while k < shown.len() {
            // A run of launches from one call site (one line when brief).
            let same = |j: usize| {
                self.label(shown[j]) == self.label(shown[k])
                    && self.site(shown[j]) == self.site(shown[k])
            };
            let mut e = k + 1;
            while brief && e < shown.len() && same(e) {
                e += 1;
            }
            let mut rules: Vec<(&str, usize)> = Vec::new();
            for &j in &shown[k..e] {
                if let Some(rule) = self.joined[&j].as_deref() {
                    match rules.iter_mut().find(|(n, _)| *n == rule) {
                        Some(c) => c.1 += 1,
                        None => rules.push((rule, 1)),
                    }
                }
            }
            let how: String = rules
                .iter()
                .map(|(n, c)| match c {
                    1 => format!("  [{n}]"),
                    _ => format!("  [{n}] x{c}"),
                })
                .collect();
            let _ = writeln!(
                t,
                "    {} at {}{}{how}",
                self.label(shown[k]),
                self.site(shown[k]),
                times(e - k)
            );
            k = e;
        }
        if let Some(d) = self.dead.get(r).filter(|d| !d.is_empty()) {
            let list = if brief {
                ranges(d)
            } else {
                d.iter()
                    .map(|n| format!("#{n}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let _ = writeln!(
                t,
                "    dead temporaries kept in registers (never allocated): {list}"
            );
        }
        self.deferrals(t, r, brief);
    }

    fn deferrals(&self, t: &mut String, r: usize, brief: bool) {
        let why: &[(usize, Why)] = self.deferred.get(r).map_or(&[], |v| v.as_slice());
        let mut k = 0;
        while k < why.len() {
            let (launch, first) = &why[k];
            let mut e = k + 1;
            let mut written: Vec<usize> = Vec::new();
            if let (true, Why::Deferred(outs)) = (brief, first) {
                written.extend(outs);
                while e < why.len() {
                    let (j, w) = &why[e];
                    match w {
                        Why::Deferred(o)
                            if self.label(*j) == self.label(*launch)
                                && self.site(*j) == self.site(*launch) =>
                        {
                            written.extend(o);
                            e += 1;
                        }
                        _ => break,
                    }
                }
            }
            let line = if e - k > 1 {
                format!(
                    "deferred: write {} (not demanded); this region takes their values in registers, and each runs only if what it writes is read later",
                    ranges(&written)
                )
            } else {
                first.text(&|n| n)
            };
            let (label, site) = (self.label(*launch), self.site(*launch));
            let _ = writeln!(t, "    {label} at {site}{}: {line}", times(e - k));
            k = e;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ranges;

    #[test]
    fn ranges_join_runs() {
        assert_eq!(ranges(&[3, 1, 2, 7, 5, 6, 9]), "#1-#3, #5-#7, #9");
        assert_eq!(ranges(&[4]), "#4");
        assert_eq!(ranges(&[]), "");
    }
}
