//! C++ identifiers for Python names: reserved words and our own prefixes are
//! avoided; labels and file-level names keep letters, digits and underscores.

/// C++ keywords, alternative operator tokens, standard typedefs and macros, and
/// the names generated code relies on: a Python name equal to one of these gets
/// a `u_` prefix in C++.
pub(super) const RESERVED: &[&str] = &[
    // keywords and alternative tokens (those that are not Python keywords too)
    "alignas",
    "alignof",
    "and_eq",
    "asm",
    "auto",
    "bitand",
    "bitor",
    "bool",
    "case",
    "catch",
    "char",
    "char8_t",
    "char16_t",
    "char32_t",
    "compl",
    "concept",
    "const",
    "consteval",
    "constexpr",
    "constinit",
    "const_cast",
    "co_await",
    "co_return",
    "co_yield",
    "decltype",
    "default",
    "delete",
    "do",
    "double",
    "dynamic_cast",
    "enum",
    "explicit",
    "export",
    "extern",
    "false",
    "float",
    "friend",
    "goto",
    "inline",
    "int",
    "long",
    "mutable",
    "namespace",
    "new",
    "noexcept",
    "not_eq",
    "nullptr",
    "operator",
    "or_eq",
    "private",
    "protected",
    "public",
    "register",
    "reinterpret_cast",
    "requires",
    "short",
    "signed",
    "sizeof",
    "static",
    "static_assert",
    "static_cast",
    "struct",
    "switch",
    "template",
    "this",
    "thread_local",
    "throw",
    "true",
    "typedef",
    "typeid",
    "typename",
    "union",
    "unsigned",
    "using",
    "virtual",
    "void",
    "volatile",
    "wchar_t",
    "xor",
    "xor_eq",
    "and",
    "or",
    "not",
    // standard typedefs and lower-case macros
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "size_t",
    "ssize_t",
    "ptrdiff_t",
    "intptr_t",
    "uintptr_t",
    "intmax_t",
    "uintmax_t",
    "errno",
    "stdin",
    "stdout",
    "stderr",
    "offsetof",
    "linux",
    "unix",
    "i386",
    // macros without an underscore (those with one are caught by the rule below)
    "NULL",
    "EOF",
    "NAN",
    "INFINITY",
    "BUFSIZ",
    "EDOM",
    "ERANGE",
    "EILSEQ",
    // names generated code uses unqualified
    "Kokkos",
    "pk",
    "std",
    "printf",
    "f",
    "main",
];

pub fn cpp_ident(name: &str) -> String {
    let upper_macro = name.contains('_')
        && name.len() > 1
        && name
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_');
    if RESERVED.contains(&name)
        || upper_macro
        || name.starts_with("pk_")
        || name.starts_with("pkf_")
        || name.starts_with("__")
        || name.starts_with("u_")
    {
        format!("u_{name}")
    } else {
        name.to_string()
    }
}

/// Kernel labels and C++ names: letters, digits and underscores only.
pub fn sanitize(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}
