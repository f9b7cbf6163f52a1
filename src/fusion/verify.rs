//! Checks a plan before anything runs (debug builds, and `PK_VERIFY=1`, which
//! the test suite sets): every pending launch is in exactly one region,
//! regions run in dependency order, and no dependency crosses regions
//! backwards.
use super::plan::Plan;

/// `n`: launches in the flush; `edges`: (earlier, later) positions.
pub fn verify(plan: &Plan, n: usize, edges: &[(usize, usize)]) -> Result<(), String> {
    let mut region_of = vec![usize::MAX; n];
    for (r, region) in plan.regions.iter().enumerate() {
        for &k in region {
            if k >= n {
                return Err(format!("region {r} holds launch {k} of a flush of {n}"));
            }
            if region_of[k] != usize::MAX {
                return Err(format!("launch {k} is in regions {} and {r}", region_of[k]));
            }
            region_of[k] = r;
        }
    }
    if let Some(k) = region_of.iter().position(|r| *r == usize::MAX) {
        return Err(format!("launch {k} is in no region"));
    }
    for &(a, b) in edges {
        if a >= n || b >= n {
            return Err(format!("dependency {a} -> {b} leaves a flush of {n}"));
        }
        if region_of[a] > region_of[b] {
            return Err(format!(
                "launch {b} (region {}) depends on launch {a}, which runs later (region {})",
                region_of[b], region_of[a]
            ));
        }
        if region_of[a] == region_of[b] {
            let order = &plan.regions[region_of[a]];
            let pos = |k| order.iter().position(|x| *x == k);
            if pos(a) > pos(b) {
                return Err(format!(
                    "launch {b} runs before launch {a} it depends on, in region {}",
                    region_of[a]
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(regions: Vec<Vec<usize>>) -> Plan {
        Plan {
            regions,
            ..Default::default()
        }
    }

    #[test]
    fn a_plan_in_program_order_passes() {
        assert!(verify(&plan(vec![vec![0, 1], vec![2]]), 3, &[(0, 1), (1, 2)]).is_ok());
    }

    #[test]
    fn missing_and_duplicated_launches_fail() {
        let e = verify(&plan(vec![vec![0], vec![2]]), 3, &[]).unwrap_err();
        assert!(e.contains("launch 1 is in no region"), "{e}");
        let e = verify(&plan(vec![vec![0, 1], vec![1, 2]]), 3, &[]).unwrap_err();
        assert!(e.contains("launch 1 is in regions 0 and 1"), "{e}");
    }

    #[test]
    fn a_dependency_running_backwards_fails() {
        let e = verify(&plan(vec![vec![1], vec![0]]), 2, &[(0, 1)]).unwrap_err();
        assert!(e.contains("depends on launch 0"), "{e}");
        let e = verify(&plan(vec![vec![1, 0]]), 2, &[(0, 1)]).unwrap_err();
        assert!(e.contains("runs before"), "{e}");
    }
}
