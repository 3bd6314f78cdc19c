//! Rust source as tokens, for the rules that read code rather than lines: comments dropped,
//! literals reduced to one token, each token with its line.

/// What a token is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A word: a keyword or an identifier (a raw identifier without its `r#`).
    Word(String),
    /// One punctuation character; `::` is [`Kind::Path`].
    Punct(char),
    /// The path separator `::`.
    Path,
    /// A plain string (`"..."`), with its text as written between the quotes (escapes kept):
    /// never code, but an attribute's value (`#[path = "lib.rs"]`).
    Str(String),
    /// A byte, C or raw string, a character or a number: never code.
    Literal,
    /// A lifetime or a loop label.
    Lifetime,
}

/// A token and the line (from 1) it starts on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What it is.
    pub kind: Kind,
    /// Where it starts.
    pub line: usize,
}

impl Token {
    /// Whether the token is the word `word`.
    pub fn is(&self, word: &str) -> bool {
        matches!(&self.kind, Kind::Word(w) if w == word)
    }

    /// The word, if it is one.
    pub fn word(&self) -> Option<&str> {
        match &self.kind {
            Kind::Word(w) => Some(w),
            _ => None,
        }
    }

    /// Whether the token is the punctuation `c`.
    pub fn punct(&self, c: char) -> bool {
        self.kind == Kind::Punct(c)
    }
}

/// The tokens of `source`.
pub fn tokens(source: &str) -> Vec<Token> {
    let chars: Vec<char> = source.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        at: 0,
        line: 1,
    };
    let mut found = Vec::new();
    while let Some(c) = lexer.peek(0) {
        let line = lexer.line;
        let kind = if c.is_whitespace() {
            lexer.bump();
            continue;
        } else if c == '/' && lexer.peek(1) == Some('/') {
            while lexer.peek(0).is_some_and(|c| c != '\n') {
                lexer.bump();
            }
            continue;
        } else if c == '/' && lexer.peek(1) == Some('*') {
            lexer.block_comment();
            continue;
        } else if let Some(hashes) = lexer.raw_string_start() {
            lexer.raw_string(hashes);
            Kind::Literal
        } else if c == '"' {
            let start = lexer.at + 1;
            lexer.quoted('"');
            let end = lexer.at.saturating_sub(1).max(start);
            Kind::Str(chars[start..end].iter().collect())
        } else if (c == 'b' || c == 'c') && lexer.peek(1) == Some('"') {
            lexer.bump();
            lexer.quoted('"');
            Kind::Literal
        } else if c == 'b' && lexer.peek(1) == Some('\'') {
            lexer.bump();
            lexer.quoted('\'');
            Kind::Literal
        } else if c == '\'' {
            lexer.quote_or_lifetime()
        } else if c.is_ascii_digit() {
            while lexer
                .peek(0)
                .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '.')
            {
                // `0..n` is a range, not a number.
                if lexer.peek(0) == Some('.') && lexer.peek(1) == Some('.') {
                    break;
                }
                lexer.bump();
            }
            Kind::Literal
        } else if c.is_alphabetic() || c == '_' {
            if c == 'r' && lexer.peek(1) == Some('#') {
                lexer.bump();
                lexer.bump();
            }
            Kind::Word(lexer.word())
        } else if c == ':' && lexer.peek(1) == Some(':') {
            lexer.bump();
            lexer.bump();
            Kind::Path
        } else {
            lexer.bump();
            Kind::Punct(c)
        };
        found.push(Token { kind, line });
    }
    found
}

struct Lexer<'a> {
    chars: &'a [char],
    at: usize,
    line: usize,
}

impl Lexer<'_> {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    fn bump(&mut self) {
        if self.peek(0) == Some('\n') {
            self.line += 1;
        }
        self.at += 1;
    }

    fn word(&mut self) -> String {
        let mut word = String::new();
        while let Some(c) = self.peek(0).filter(|c| c.is_alphanumeric() || *c == '_') {
            word.push(c);
            self.bump();
        }
        word
    }

    fn block_comment(&mut self) {
        let mut depth = 0;
        while let Some(c) = self.peek(0) {
            if c == '/' && self.peek(1) == Some('*') {
                depth += 1;
                self.bump();
            } else if c == '*' && self.peek(1) == Some('/') {
                depth -= 1;
                self.bump();
                if depth == 0 {
                    self.bump();
                    return;
                }
            }
            self.bump();
        }
    }

    /// The number of `#` of a raw string starting here (`r"`, `r#"`, `br#"`, `cr"`).
    fn raw_string_start(&self) -> Option<usize> {
        let prefix = match (self.peek(0)?, self.peek(1)) {
            ('r', _) => 1,
            ('b' | 'c', Some('r')) => 2,
            _ => return None,
        };
        let hashes = (prefix..)
            .take_while(|&i| self.peek(i) == Some('#'))
            .count();
        (self.peek(prefix + hashes) == Some('"')).then_some(hashes)
    }

    fn raw_string(&mut self, hashes: usize) {
        while self.peek(0) != Some('"') {
            self.bump();
        }
        self.bump();
        while self.peek(0).is_some() {
            if self.peek(0) == Some('"') && (1..=hashes).all(|i| self.peek(i) == Some('#')) {
                for _ in 0..=hashes {
                    self.bump();
                }
                return;
            }
            self.bump();
        }
    }

    fn quoted(&mut self, quote: char) {
        self.bump();
        while let Some(c) = self.peek(0) {
            self.bump();
            if c == '\\' {
                self.bump();
            } else if c == quote {
                return;
            }
        }
    }

    fn quote_or_lifetime(&mut self) -> Kind {
        let escaped = self.peek(1) == Some('\\');
        if escaped || self.peek(2) == Some('\'') {
            self.quoted('\'');
            Kind::Literal
        } else {
            self.bump();
            self.word();
            Kind::Lifetime
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(source: &str) -> Vec<String> {
        tokens(source)
            .into_iter()
            .filter_map(|t| t.word().map(str::to_string))
            .collect()
    }

    // Comments, strings and characters hide no code; lifetimes are not characters.
    #[test]
    fn comments_and_literals_hide_their_words() {
        let source = "use a; // use b;\n/* use /* c */ d */ let s = \"use e\"; let r = r#\"f\"#;\nfn g<'h>(x: &'h str) -> char { 'i' }";
        assert_eq!(
            words(source),
            vec![
                "use", "a", "let", "s", "let", "r", "fn", "g", "x", "str", "char"
            ]
        );
        let lines: Vec<usize> = tokens(source).iter().map(|t| t.line).collect();
        assert_eq!(lines.first(), Some(&1));
        assert_eq!(lines.last(), Some(&3));
    }
}
