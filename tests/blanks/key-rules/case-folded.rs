// Refused by value_types::keys_keep_their_text: keys are lowercased so that OP-1 and op-1 match,
// which makes two clients' operations one, and changes the text the client sent.
    pub fn new(key: impl Into<String>) -> Result<Self, Error> {
        let key = key.into();
        if key.is_empty() {
            return Err(Error::InvalidKey(KeyProblem::Empty));
        }
        if key.len() > MAX_KEY_BYTES {
            return Err(Error::InvalidKey(KeyProblem::TooLong { bytes: key.len() }));
        }
        if let Some(at) = key.chars().position(char::is_control) {
            return Err(Error::InvalidKey(KeyProblem::ControlCharacter { at }));
        }
        Ok(Self(key.to_lowercase()))
    }
