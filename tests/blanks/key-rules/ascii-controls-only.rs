// Refused by value_types::key_grammar_matches_the_oracle: only ASCII control characters are
// refused, so U+0085 (next line) and the other C1 controls get into keys and logs.
    pub fn new(key: impl Into<String>) -> Result<Self, Error> {
        let key = key.into();
        if key.is_empty() {
            return Err(Error::InvalidKey(KeyProblem::Empty));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::InvalidKey(KeyProblem::TooLong { bytes: key.len() }));
        }
        if let Some(at) = key.chars().position(|c| c.is_ascii_control()) {
            return Err(Error::InvalidKey(KeyProblem::ControlCharacter { at }));
        }
        Ok(Self(key))
    }
