//! Where a kernel's text came from, and turning byte spans back into the user's
//! file, line and column.
use super::ast::Span;

/// The captured source of one function, dedented, plus where it sits in its file.
#[derive(Clone, Debug)]
pub struct SourceInfo {
    pub text: String,
    pub filename: String,
    /// 1-based line in `filename` of the first line of `text`.
    pub first_line: u32,
    /// Columns removed by dedenting (added back when reporting).
    pub indent: u32,
}

/// A resolved location: 1-based line and column in the user's file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub filename: String,
    pub line: u32,
    pub column: u32,
    pub source_line: String,
    pub caret_len: u32,
}

impl SourceInfo {
    pub fn locate(&self, span: Span) -> Location {
        let start = (span.start as usize).min(self.text.len());
        let before = &self.text[..start];
        let line_idx = before.matches('\n').count();
        let line_start = before.rfind('\n').map_or(0, |p| p + 1);
        let col = self.text[line_start..start].chars().count();
        let line_text = self.text[line_start..]
            .split('\n')
            .next()
            .unwrap_or("")
            .trim_end();
        let end = (span.end as usize).clamp(start, line_start + line_text.len());
        let caret = self.text[start..end].chars().count().max(1);
        let pad = " ".repeat(self.indent as usize);
        Location {
            filename: self.filename.clone(),
            line: self.first_line + line_idx as u32,
            column: col as u32 + 1 + self.indent,
            source_line: format!("{pad}{line_text}"),
            caret_len: caret as u32,
        }
    }
}
