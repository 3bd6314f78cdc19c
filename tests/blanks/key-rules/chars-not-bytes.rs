// Refused by value_types::key_grammar_matches_the_oracle: the length is counted in characters,
// so a key of 200 two-byte characters (400 bytes) is accepted.
    pub fn new(key: impl Into<String>) -> Result<Self, Error> {
        let key = key.into();
        if key.is_empty() {
            return Err(Error::InvalidKey(KeyProblem::Empty));
        }
        if key.chars().count() > MAX_KEY_BYTES {
            return Err(Error::InvalidKey(KeyProblem::TooLong { bytes: key.len() }));
        }
        if let Some(at) = key.chars().position(char::is_control) {
            return Err(Error::InvalidKey(KeyProblem::ControlCharacter { at }));
        }
        Ok(Self(key))
    }
