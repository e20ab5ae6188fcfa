//! What a record's sentence vectors are embedded from.

use retold_domain::text::speaker_label;
use retold_domain::{IndexedText, Origin};

/// A memory's sentence texts (its content's own label, if any).
fn sentence_texts(speaker: Option<&str>, content: &str, context: Option<&str>, max: usize) -> Vec<String> {
    IndexedText { origin: Origin::Memory, speaker, content, context }.sentence_texts(max)
}

/// A turn record's sentence texts: labelled by the speaker the host named, else by nobody.
fn turn_sentences(speaker: Option<&str>, content: &str) -> Vec<String> {
    IndexedText { origin: Origin::Turn, speaker, content, context: None }.sentence_texts(16)
}

/// A tool's log and a note, with the sentences each gets (kept as a turn or written as a
/// memory alike): the colon after their first word names no speaker.
const HEADED: [(&str, &[&str]); 2] = [
    (
        "ERROR: connection refused to db-prod-3:5432\nretrying in 5 s with backoff\nERROR: giving up after 3 attempts",
        &[
            "ERROR: connection refused to db-prod-3:5432",
            "retrying in 5 s with backoff",
            "ERROR: giving up after 3 attempts",
        ],
    ),
    (
        "Note: the cache is cold today. Warm it before the benchmark runs.",
        &["Note: the cache is cold today.", "Warm it before the benchmark runs."],
    ),
];

#[test]
fn a_turn_is_labelled_by_the_speaker_its_host_named_never_by_its_own_text() {
    // A group chat turn: the host names the speaker; the content has no label.
    assert_eq!(
        turn_sentences(Some("Priya"), "I moved the standup to 10am. The room is Lovelace now."),
        ["Priya: I moved the standup to 10am.", "Priya: The room is Lovelace now."]
    );
    // A tool's output or a note whose first word ends in a colon: not a speaker, so not
    // copied onto every line.
    for (content, expected) in HEADED {
        assert_eq!(turn_sentences(None, content), expected);
    }
    // The record's text carries the named speaker too, before its content.
    let named = IndexedText {
        origin: Origin::Turn,
        speaker: Some("Priya"),
        content: "Done.",
        context: Some("Ship it?"),
    };
    assert_eq!(named.embedding_text(), "Priya: Done.\nShip it?");
}

#[test]
fn log_lines_list_items_and_cjk_sentences_are_sentences_of_their_own() {
    let log = "2024-05-03T10:00:01Z build started on runner-7\n2024-05-03T10:04:12Z test suite auth failed with E4021\n2024-05-03T10:04:13Z build finished red";
    assert_eq!(turn_sentences(None, log).len(), 3);
    assert_eq!(turn_sentences(None, log)[1], "2024-05-03T10:04:12Z test suite auth failed with E4021");
    let list = "Packing list for the trip:\n- hiking boots and wool socks\n- the blue rain jacket\n- two full water bottles";
    assert_eq!(
        turn_sentences(None, list),
        [
            "Packing list for the trip:",
            "- hiking boots and wool socks",
            "- the blue rain jacket",
            "- two full water bottles"
        ]
    );
    assert_eq!(
        turn_sentences(None, "我的猫对鸡肉过敏。所以我买三文鱼猫粮！你觉得怎么样？"),
        ["我的猫对鸡肉过敏。", "所以我买三文鱼猫粮！", "你觉得怎么样？"]
    );
}

/// A long tool output is mostly one line written again with other numbers; the sentence
/// vectors go to the lines that differ, so the one failure among a hundred progress lines is
/// found by its own vector however far down it is.
#[test]
fn a_log_s_repeated_lines_share_one_vector_and_the_line_that_differs_gets_its_own() {
    let mut lines: Vec<String> = (0..100)
        .map(|i| format!("shard {i:04} verified: {} blocks, checksum ok, 0 repairs", 64 + i))
        .collect();
    lines.insert(60, "FATAL: checksum mismatch in shard 0060 on volume vol-9f2e".into());
    lines.push("mounted 99 of 100 shards in 412 ms".into());
    let got = turn_sentences(None, &lines.join("\n"));
    assert_eq!(
        got,
        [
            "shard 0000 verified: 64 blocks, checksum ok, 0 repairs",
            "FATAL: checksum mismatch in shard 0060 on volume vol-9f2e",
            "mounted 99 of 100 shards in 412 ms"
        ]
    );
    // Words, not numbers, make sentences differ: each step of a procedure keeps its vector.
    let steps =
        "1. Stop the service on db-1.\n2. Take a snapshot of the volume.\n3. Start the service again.";
    assert_eq!(turn_sentences(None, steps).len(), 3);
}

#[test]
fn a_sentence_s_number_template_writes_each_run_of_digits_as_one_zero() {
    use retold_domain::text::number_template;
    assert_eq!(number_template(" step 12 of 40 took 903 ms "), "step 0 of 0 took 0 ms");
    assert_eq!(number_template("step 7 of 40 took 1200 ms"), number_template("step 12 of 40 took 903 ms"));
    assert_ne!(number_template("step 7 of 40 failed"), number_template("step 12 of 40 took 903 ms"));
    assert_eq!(number_template("v1.2.3 on 2024-05-03T10:00Z"), "v0.0.0 on 0-0-0T0:0Z");
}

#[test]
fn each_sentence_carries_the_speaker_of_a_transcript_line() {
    let turn = "Nate: That's really cool Joanna! I hope it does well.\nThe gaming party was a great success! \
                We even played some Chess afterward just for fun.";
    assert_eq!(
        sentence_texts(None, turn, None, 16),
        [
            "Nate: That's really cool Joanna!",
            "Nate: I hope it does well.",
            "Nate: The gaming party was a great success!",
            "Nate: We even played some Chess afterward just for fun.",
        ]
    );
    // At most `max`, the first ones; none at 0. A long record bounded to one still gets it.
    assert_eq!(sentence_texts(None, turn, None, 1), ["Nate: That's really cool Joanna!"]);
    assert_eq!(
        sentence_texts(None, turn, None, 2),
        ["Nate: That's really cool Joanna!", "Nate: I hope it does well."]
    );
    assert!(sentence_texts(None, turn, None, 0).is_empty());
}

#[test]
fn a_record_without_a_speaker_is_split_as_written() {
    assert_eq!(
        sentence_texts(None, "The build cache lives on disk. It is 4 GB! Why?", None, 16),
        ["The build cache lives on disk.", "It is 4 GB!"]
    );
    // A decimal point or an identifier's dot does not end a sentence; a bare "..." is no sentence.
    assert_eq!(
        sentence_texts(None, "Version 2.5 ships today. ... node.js ships too", None, 16),
        ["Version 2.5 ships today.", "node.js ships too"]
    );
}

#[test]
fn one_sentence_without_a_context_is_the_record_s_own_vector_so_it_gets_none() {
    assert!(sentence_texts(None, "User prefers dark mode.", None, 16).is_empty());
    assert!(sentence_texts(None, "Caroline: Hi Mel!", None, 16).is_empty());
    // With a context, the record's own vector is not its sentence's.
    assert_eq!(
        sentence_texts(None, "Caroline: Yes, we went last week!", Some("Did you go?"), 16),
        ["Caroline: Yes, we went last week!"]
    );
}

#[test]
fn a_sentence_of_fewer_than_four_words_gets_no_vector_of_its_own() {
    let turn = "Melanie: Wow, Caroline! Thanks! I painted a lake at sunrise last week. Love it.";
    assert_eq!(sentence_texts(None, turn, None, 16), ["Melanie: I painted a lake at sunrise last week."]);
    // Counted before the bound: the first `max` of the sentences that get one.
    assert_eq!(sentence_texts(None, turn, None, 1), ["Melanie: I painted a lake at sunrise last week."]);
    // Words are runs of letters and digits: "It is 4 GB" is four, "Yes, last week" three.
    assert_eq!(sentence_texts(None, "Sure. It is 4 GB!", None, 16), ["It is 4 GB!"]);
    assert!(sentence_texts(None, "Yes, last week!", Some("Did you go?"), 16).is_empty());
    assert!(sentence_texts(None, "Hi! Thanks! Bye.", None, 16).is_empty());
    // Without spaces (Han), each letter is a word: a sentence is not one long word.
    assert_eq!(sentence_texts(None, "谢谢! 我上周在湖边画了日出.", None, 16), ["我上周在湖边画了日出."]);
}

#[test]
fn a_speaker_label_is_one_to_three_plain_words_before_the_first_colon() {
    assert_eq!(speaker_label("Caroline: I went."), "Caroline: ");
    assert_eq!(speaker_label("Dr Ada Lovelace: Hello."), "Dr Ada Lovelace: ");
    assert_eq!(speaker_label("Mary-Kate O'Brien: Hello."), "Mary-Kate O'Brien: ");
    // Four words, a sentence end, or no ": " is no label.
    assert_eq!(speaker_label("The thing I said: yes."), "");
    assert_eq!(speaker_label("Yes. Then: no."), "");
    assert_eq!(speaker_label("see https://example.com"), "");
    assert_eq!(speaker_label(": empty"), "");
}

#[test]
fn a_log_level_a_form_field_or_a_note_s_heading_is_no_speaker() {
    for line in [
        "ERROR: connection refused to db-prod-3:5432",
        "WARN: disk 91% full on /var",
        "TODO: rotate the staging keys",
        "Q: which region is the bucket in?",
        "Note: the cache is cold.",
        "Update: the migration finished at 02:10.",
        "Re: invoice 4471",
        "Step 3: run the seed script",
        "fix: handle a null customer id",
        "user: I prefer tea",
    ] {
        assert_eq!(speaker_label(line), "", "{line}");
    }
}

#[test]
fn a_memory_of_log_lines_or_a_note_keeps_its_heading_on_its_own_line_only() {
    // Written as a memory (no speaker named): the first line's level is not copied onto the
    // other lines, as a transcript's speaker would be.
    for (content, expected) in HEADED {
        assert_eq!(sentence_texts(None, content, None, 16), expected);
    }
    // A transcript line's speaker still is.
    assert_eq!(
        sentence_texts(None, "Priya: I moved the standup to 10am. The room is Lovelace now.", None, 16),
        ["Priya: I moved the standup to 10am.", "Priya: The room is Lovelace now."]
    );
}

#[test]
fn tokens_are_estimated_by_script() {
    use retold_domain::text::estimated_tokens;
    // Latin: four characters a token.
    assert_eq!(estimated_tokens("The build cache is cold."), 6);
    assert_eq!(estimated_tokens(""), 0);
    // Han and kana: a character a token, so 12 characters are 12 tokens, not 3.
    assert_eq!(estimated_tokens("我的猫对鸡肉过敏。所以我买"), 13);
    assert_eq!(estimated_tokens("ありがとうございます"), 10);
    assert_eq!(estimated_tokens("안녕하세요"), 5);
    // Other alphabets: two letters a token; spaces and punctuation as in Latin.
    assert_eq!(estimated_tokens("Привет"), 3);
    // An emoji is a token.
    assert_eq!(estimated_tokens("🎉🎉"), 2);
}
