//! Items read from tokens: the type names a crate defines for others, and its functions' lengths.

use super::modules::closing;
use super::tokens::{Kind, Token};

/// The longest a product function may be, from its `fn` line to its closing brace.
pub const LONGEST_FUNCTION: usize = 60;

/// The struct, enum, trait and type alias names defined `pub` or `pub(crate)`, with their lines.
pub fn shared_type_names(tokens: &[Token]) -> Vec<(String, usize)> {
    let mut found = Vec::new();
    for (at, token) in tokens.iter().enumerate() {
        if !token.is("pub") {
            continue;
        }
        let mut next = at + 1;
        if tokens.get(next).is_some_and(|t| t.punct('(')) {
            let crate_wide = tokens.get(next + 1).is_some_and(|t| t.is("crate"))
                && tokens.get(next + 2).is_some_and(|t| t.punct(')'));
            if !crate_wide {
                continue;
            }
            next += 3;
        }
        while tokens
            .get(next)
            .is_some_and(|t| t.is("unsafe") || t.is("auto"))
        {
            next += 1;
        }
        let keyword = tokens.get(next).and_then(Token::word);
        if !matches!(keyword, Some("struct" | "enum" | "trait" | "type")) {
            continue;
        }
        if let Some(name) = tokens.get(next + 1).and_then(Token::word) {
            found.push((name.to_string(), token.line));
        }
    }
    found
}

/// The functions longer than `limit` lines, as `(line of fn, name, lines)`. A function a
/// `macro_rules!` writes is the macro's text, not code of its own, and is not counted.
pub fn long_functions(tokens: &[Token], limit: usize) -> Vec<(usize, String, usize)> {
    let mut found = Vec::new();
    let mut macro_ends_at = 0;
    for (at, token) in tokens.iter().enumerate() {
        if token.is("macro_rules")
            && let Some(open) = (at..tokens.len()).find(|&i| tokens[i].punct('{'))
        {
            macro_ends_at = closing(tokens, open);
        }
        if !token.is("fn") || at < macro_ends_at {
            continue;
        }
        let Some(name) = tokens.get(at + 1).and_then(Token::word) else {
            continue;
        };
        // The body opens at the first `{` outside the signature's brackets; a `;` first means
        // a declaration without a body.
        let mut depth = 0i32;
        let mut open = None;
        for i in at + 2..tokens.len() {
            let arrow = tokens[i - 1].punct('-') || tokens[i - 1].punct('=');
            match tokens[i].kind {
                Kind::Punct('(' | '[' | '<') => depth += 1,
                Kind::Punct(')' | ']') => depth -= 1,
                Kind::Punct('>') if !arrow => depth -= 1,
                Kind::Punct('{') if depth <= 0 => {
                    open = Some(i);
                    break;
                }
                Kind::Punct(';') if depth <= 0 => break,
                _ => {}
            }
        }
        let Some(open) = open else {
            continue;
        };
        let close = closing(tokens, open);
        let lines = tokens[close].line - token.line + 1;
        if lines > limit {
            found.push((token.line, name.to_string(), lines));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::super::tokens::tokens;
    use super::*;

    // A name shared across the crate is found; a private or `pub(super)` one is not.
    #[test]
    fn shared_type_names_are_found() {
        let source = "pub struct A;\npub(crate) enum B {}\nstruct C;\npub(super) type D = u8;\npub unsafe trait E {}\npub fn f() {}\nmacro_rules! m { ($vis:vis) => { $vis struct $name; } }\n";
        assert_eq!(
            shared_type_names(&tokens(source)),
            vec![
                ("A".to_string(), 1),
                ("B".to_string(), 2),
                ("E".to_string(), 5)
            ]
        );
    }

    // A function over the limit is refused with its length; a short one, a declaration
    // without a body and one a macro writes are not.
    #[test]
    fn a_long_function_is_found() {
        let body = "    x += 1;\n".repeat(4);
        let source = format!(
            "fn short() {{}}\ntrait T {{ fn declared(&self) -> Vec<u8>; }}\nmacro_rules! m {{ () => {{ fn made() {{\n{body}\n}} }} }}\nfn long<T: Into<u8>>(x: impl Fn() -> u8) -> u8 {{\n{body}    \"}}\"; x\n}}\n"
        );
        assert_eq!(
            long_functions(&tokens(&source), 6),
            vec![(10, "long".to_string(), 7)]
        );
        assert!(long_functions(&tokens(&source), 7).is_empty());
    }
}
