//! Where a lazy reduction's total lands once its launch ran (or why it never will).
use crate::exec::kernel::Total;
use parking_lot::Mutex;

#[derive(Default)]
pub struct Slot {
    value: Mutex<Option<Result<Total, String>>>,
}

impl Slot {
    pub fn get(&self) -> Option<Result<Total, String>> {
        self.value.lock().clone()
    }
    pub fn is_set(&self) -> bool {
        self.value.lock().is_some()
    }
    pub fn set(&self, t: Total) {
        *self.value.lock() = Some(Ok(t));
    }
    pub fn fail(&self, why: &str) {
        *self.value.lock() = Some(Err(why.to_string()));
    }
}
