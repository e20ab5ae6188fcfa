//! Snowball English stems (Porter2, `rust-stemmers`) for the lexical channel's stemming.

use retold_domain::WordStemmer;
use rust_stemmers::{Algorithm, Stemmer};

/// The Snowball English stemmer: "hiking", "hiked" and "hikes" all stem to "hike".
pub struct SnowballEnglish(Stemmer);

impl SnowballEnglish {
    pub fn new() -> Self {
        Self(Stemmer::create(Algorithm::English))
    }
}

impl Default for SnowballEnglish {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for SnowballEnglish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SnowballEnglish")
    }
}

impl WordStemmer for SnowballEnglish {
    fn stem(&self, word: &str) -> String {
        self.0.stem(word).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inflections_share_a_stem_and_other_words_do_not() {
        let s = SnowballEnglish::new();
        assert_eq!(["hiking", "hiked", "hikes", "hike"].map(|w| s.stem(w)), ["hike"; 4]);
        assert_eq!(s.stem("happy"), "happi", "a final y becomes i, which add_forms allows for");
        assert_ne!(s.stem("hiker"), s.stem("hike"));
    }
}
