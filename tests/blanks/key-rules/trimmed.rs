// Refused by value_types::key_grammar_matches_the_oracle: the key is trimmed first, to be
// forgiving, so a key of spaces is called empty and " op-1" becomes another client's "op-1".
    pub fn new(key: impl Into<String>) -> Result<Self, Error> {
        let key = key.into().trim().to_string();
        if key.is_empty() {
            return Err(Error::InvalidKey(KeyProblem::Empty));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::InvalidKey(KeyProblem::TooLong { bytes: key.len() }));
        }
        if let Some(at) = key.chars().position(char::is_control) {
            return Err(Error::InvalidKey(KeyProblem::ControlCharacter { at }));
        }
        Ok(Self(key))
    }
