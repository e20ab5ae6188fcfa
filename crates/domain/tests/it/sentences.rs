//! What a record's sentence vectors are embedded from.

use retold_domain::sentence_texts;
use retold_domain::text::speaker_label;

#[test]
fn each_sentence_carries_the_speaker_of_a_transcript_line() {
    let turn = "Nate: That's really cool Joanna! I hope it does well.\nThe gaming party was a great success! \
                We even played some Chess afterward just for fun.";
    assert_eq!(
        sentence_texts(turn, None, 16),
        [
            "Nate: That's really cool Joanna!",
            "Nate: I hope it does well.",
            "Nate: The gaming party was a great success!",
            "Nate: We even played some Chess afterward just for fun.",
        ]
    );
    // At most `max`, the first ones; none at 0. A long record bounded to one still gets it.
    assert_eq!(sentence_texts(turn, None, 1), ["Nate: That's really cool Joanna!"]);
    assert_eq!(
        sentence_texts(turn, None, 2),
        ["Nate: That's really cool Joanna!", "Nate: I hope it does well."]
    );
    assert!(sentence_texts(turn, None, 0).is_empty());
}

#[test]
fn a_record_without_a_speaker_is_split_as_written() {
    assert_eq!(
        sentence_texts("The build cache lives on disk. It is 4 GB! Why?", None, 16),
        ["The build cache lives on disk.", "It is 4 GB!"]
    );
    // A decimal point or an identifier's dot does not end a sentence; a bare "..." is no sentence.
    assert_eq!(
        sentence_texts("Version 2.5 ships today. ... node.js ships too", None, 16),
        ["Version 2.5 ships today.", "node.js ships too"]
    );
}

#[test]
fn one_sentence_without_a_context_is_the_record_s_own_vector_so_it_gets_none() {
    assert!(sentence_texts("User prefers dark mode.", None, 16).is_empty());
    assert!(sentence_texts("Caroline: Hi Mel!", None, 16).is_empty());
    // With a context, the record's own vector is not its sentence's.
    assert_eq!(
        sentence_texts("Caroline: Yes, we went last week!", Some("Did you go?"), 16),
        ["Caroline: Yes, we went last week!"]
    );
}

#[test]
fn a_sentence_of_fewer_than_four_words_gets_no_vector_of_its_own() {
    let turn = "Melanie: Wow, Caroline! Thanks! I painted a lake at sunrise last week. Love it.";
    assert_eq!(sentence_texts(turn, None, 16), ["Melanie: I painted a lake at sunrise last week."]);
    // Counted before the bound: the first `max` of the sentences that get one.
    assert_eq!(sentence_texts(turn, None, 1), ["Melanie: I painted a lake at sunrise last week."]);
    // Words are runs of letters and digits: "It is 4 GB" is four, "Yes, last week" three.
    assert_eq!(sentence_texts("Sure. It is 4 GB!", None, 16), ["It is 4 GB!"]);
    assert!(sentence_texts("Yes, last week!", Some("Did you go?"), 16).is_empty());
    assert!(sentence_texts("Hi! Thanks! Bye.", None, 16).is_empty());
    // Without spaces (Han), each letter is a word: a sentence is not one long word.
    assert_eq!(sentence_texts("谢谢! 我上周在湖边画了日出.", None, 16), ["我上周在湖边画了日出."]);
}

#[test]
fn a_speaker_label_is_one_to_three_plain_words_before_the_first_colon() {
    assert_eq!(speaker_label("Caroline: I went."), "Caroline: ");
    assert_eq!(speaker_label("Dr Ada Lovelace: Hello."), "Dr Ada Lovelace: ");
    assert_eq!(speaker_label("Note: the cache is cold."), "Note: ");
    // Four words, a sentence end, or no ": " is no label.
    assert_eq!(speaker_label("The thing I said: yes."), "");
    assert_eq!(speaker_label("Yes. Then: no."), "");
    assert_eq!(speaker_label("see https://example.com"), "");
    assert_eq!(speaker_label(": empty"), "");
}
