// Refused by value_types::debug_shows_only_the_length: Debug shows the first characters, to
// help debugging, so part of every key ends up in the logs.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let prefix: String = self.0.chars().take(4).collect();
        write!(f, "Key({prefix}…)")
    }
