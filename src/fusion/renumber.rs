//! Buffer numbers in refusal reasons: allocation addresses differ run to
//! run, so reports number buffers by first use in the flush instead.
use std::collections::HashMap;

/// Buffer numbers in reasons are allocation addresses until here.
pub fn renumber(reason: &str, ids: &HashMap<usize, usize>) -> String {
    let mut out = String::with_capacity(reason.len());
    let mut rest = reason;
    while let Some(at) = rest.find('#') {
        out.push_str(&rest[..=at]);
        rest = &rest[at + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits]
            .parse::<usize>()
            .ok()
            .and_then(|a| ids.get(&a))
        {
            Some(n) => out.push_str(&n.to_string()),
            None => out.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn buffer_addresses_become_numbers() {
        let ids = [(140001, 0), (140777, 3)].into_iter().collect();
        assert_eq!(
            super::renumber("buffers #140777 and #140001, not #9", &ids),
            "buffers #3 and #0, not #9"
        );
    }
}
