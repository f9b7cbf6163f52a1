//! `pk.RangePolicy`, `pk.MDRangePolicy` and `pk.TeamPolicy` as the native
//! side keeps them (ranges, the space, a team policy's scratch sizes).
use crate::exec::launch::Bounds;
use crate::exec::space::{default_space, from_code};
use crate::types::Space;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyInt;
use smallvec::smallvec;

/// A range (1 index) or multi-dimensional range policy.
#[pyclass(frozen, subclass, module = "pykokkos._native", name = "Policy")]
pub struct Policy {
    pub lo: Vec<i64>,
    pub hi: Vec<i64>,
    /// None: the default space at launch time.
    pub space: Option<u8>,
    /// A TeamPolicy: `hi` is [league size, team size (<= 0: AUTO), vector length].
    pub team: bool,
    /// Scratch bytes of a TeamPolicy: per team and per thread, levels 0 and 1.
    /// `set_scratch_size` changes them in place, as Kokkos' does.
    pub scratch: [std::sync::atomic::AtomicI64; 4],
}

#[pymethods]
impl Policy {
    #[new]
    #[pyo3(signature = (lo, hi, space=None, team=false))]
    fn new(lo: Vec<i64>, hi: Vec<i64>, space: Option<u8>, team: bool) -> PyResult<Self> {
        if team {
            if hi.len() != 3 || hi[0] < 0 || hi[2] < 1 {
                return Err(PyValueError::new_err(
                    "a team policy needs a league size >= 0, a team size (or pk.AUTO) and a vector length >= 1",
                ));
            }
            return Ok(Policy {
                lo: vec![0; 3],
                hi,
                space,
                team,
                scratch: Default::default(),
            });
        }
        if lo.len() != hi.len() || lo.is_empty() || lo.len() > 6 {
            return Err(PyValueError::new_err(
                "a policy needs matching begin and end lists of 1 to 6 entries",
            ));
        }
        Ok(Policy {
            lo,
            hi,
            space,
            team,
            scratch: Default::default(),
        })
    }
    /// `policy.set_scratch_size(level, pk.PerTeam(bytes)[, pk.PerThread(bytes)])`.
    #[pyo3(signature = (level, first, second=None))]
    fn set_scratch_size<'py>(
        slf: Bound<'py, Self>,
        level: i64,
        first: &Bound<'py, PyAny>,
        second: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, Self>> {
        let me = slf.get();
        if !me.team {
            return Err(PyTypeError::new_err(
                "set_scratch_size applies to a pk.TeamPolicy",
            ));
        }
        if !(0..=1).contains(&level) {
            return Err(PyValueError::new_err(format!(
                "scratch level {level}: Kokkos has levels 0 and 1"
            )));
        }
        for req in std::iter::once(first).chain(second) {
            let (kind, bytes): (String, i64) = match (req.getattr("kind"), req.getattr("bytes")) {
                (Ok(k), Ok(b)) => (k.extract()?, b.extract()?),
                _ => {
                    return Err(PyTypeError::new_err(
                        "set_scratch_size takes pk.PerTeam(bytes) and/or pk.PerThread(bytes)",
                    ))
                }
            };
            if bytes < 0 {
                return Err(PyValueError::new_err("a scratch size cannot be negative"));
            }
            let slot = 2 * level as usize + usize::from(kind == "thread");
            me.scratch[slot].store(bytes, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(slf)
    }
    #[getter]
    fn begin(&self) -> Vec<i64> {
        self.lo.clone()
    }
    #[getter]
    fn end(&self) -> Vec<i64> {
        self.hi.clone()
    }
    /// Scratch bytes: [per team, per thread] at level 0, then at level 1.
    #[getter]
    fn scratch_sizes(&self) -> [i64; 4] {
        self.scratch
            .each_ref()
            .map(|a| a.load(std::sync::atomic::Ordering::Relaxed))
    }
    /// Whether this is a TeamPolicy.
    #[getter]
    fn team(&self) -> bool {
        self.team
    }
    #[getter]
    fn space(&self) -> Option<u8> {
        self.space
    }
}

fn space_of(code: Option<u8>) -> Space {
    code.map_or_else(default_space, from_code)
}

/// (begin, end, space, rank) of a launch's policy; rank 0 is a TeamPolicy.
pub(super) fn policy_of(p: &Bound<'_, PyAny>) -> PyResult<(Bounds, Bounds, Space, usize)> {
    if let Ok(n) = p.cast::<PyInt>() {
        let n: i64 = n.extract()?;
        return Ok((smallvec![0], smallvec![n.max(0)], default_space(), 1));
    }
    if let Ok(pol) = p.cast::<Policy>() {
        let pol = pol.get();
        if pol.team {
            // The entry point reads [league, team, vector, scratch x 4] from `hi`.
            let mut hi = Bounds::from_slice(&pol.hi);
            hi.extend(
                pol.scratch
                    .iter()
                    .map(|a| a.load(std::sync::atomic::Ordering::Relaxed)),
            );
            return Ok((smallvec![0; hi.len()], hi, space_of(pol.space), 0));
        }
        return Ok((
            Bounds::from_slice(&pol.lo),
            Bounds::from_slice(&pol.hi),
            space_of(pol.space),
            pol.lo.len(),
        ));
    }
    // Anything that is an integer (a NumPy integer, a reduction's lazy total).
    if let Ok(n) = p.call_method0(pyo3::intern!(p.py(), "__index__")) {
        return policy_of(&n);
    }
    Err(PyTypeError::new_err(format!(
        "the policy must be an int or pk.RangePolicy/pk.MDRangePolicy, got {}",
        p.get_type().name()?
    )))
}
