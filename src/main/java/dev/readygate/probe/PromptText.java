package dev.readygate.probe;

import java.util.random.RandomGenerator;

/**
 * Builds prompt text from ordinary English words, different for every probe (a random first sentence), so the
 * engine's prefix cache cannot make a probe unrealistically cheap.
 */
final class PromptText {

    private static final String[] WORDS = ("""
            the of and to in is was for on that with as by at from it an be are this which or has had not but were
            have been their they one all also more than can other into new first after who time year two may would
            about up out only over most some such when there these many so what where how we you he she his her our
            your them will just like very well city country river mountain language people world history music
            science water light day night morning evening long short small large good great old young high low early
            late right left next last same make made take took give gave find found know see come came go went say
            said write read tell think work use call red green blue white black quiet bright dark warm cold soft hard
            house garden road bridge tower market station harbor forest valley island ocean sky sun moon star story
            question answer report letter table chair window door book page line word number part place group
            """).strip().split("\\s+");

    private PromptText() {}

    /** About {@code words} words in sentences; {@code random} decides which, so each call differs. */
    static String of(int words, RandomGenerator random) {
        StringBuilder text = new StringBuilder(words * 7);
        int sentence = 0;
        for (int i = 0; i < words; i++) {
            String word = WORDS[random.nextInt(WORDS.length)];
            if (sentence == 0) {
                text.append(i == 0 ? "" : " ")
                        .append(Character.toUpperCase(word.charAt(0)))
                        .append(word, 1, word.length());
            } else {
                text.append(' ').append(word);
            }
            sentence++;
            if (sentence >= 8 + random.nextInt(8) || i == words - 1) {
                text.append('.');
                sentence = 0;
            }
        }
        return text.toString();
    }
}
