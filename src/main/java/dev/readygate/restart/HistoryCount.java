package dev.readygate.restart;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.SequencedSet;

/**
 * How many records the history keeps (one per id), as of the last full read and the appends and rotations since: the
 * records whose first line is in each file, summed, and the latest ids, to tell a record written again from a new
 * one. Exact but for a record rewritten after its first line's file was rotated away, which the next full read
 * corrects. Changed under {@link RestartHistory}'s lock; {@link #value()} is read without it.
 */
final class HistoryCount {

    /** How many of the latest ids are remembered to tell a record written again from a new one. */
    private static final int RECENT_IDS = 1024;

    private final Path file;
    private final int maxRotatedFiles;
    // Records whose first line is in the current file (0) and in each rotated file (n); empty before a full read.
    private final List<Long> firstLines = new ArrayList<>();
    private final SequencedSet<String> recentIds = new LinkedHashSet<>();
    private volatile long value = -1;

    HistoryCount(Path file, int maxRotatedFiles) {
        this.file = file;
        this.maxRotatedFiles = maxRotatedFiles;
    }

    /** The count; -1 before the first full read. */
    long value() {
        return value;
    }

    /**
     * What a full read found: {@code firstInFile[i]} records have their first line in {@code paths.get(i)}, and
     * {@code locations} are every kept record's place, oldest first.
     */
    void read(List<Path> paths, long[] firstInFile, List<HistoryExport.Location> locations) {
        firstLines.clear();
        // firstLines.get(0) is the current file's count, get(n) file .n's.
        for (int i = paths.size() - 1; i >= 0; i--) {
            Path path = paths.get(i);
            int number = path.equals(file) ? 0 : rotatedNumber(path);
            while (firstLines.size() <= number) {
                firstLines.add(0L);
            }
            firstLines.set(number, firstInFile[i]);
        }
        if (firstLines.isEmpty()) {
            firstLines.add(0L);
        }
        recentIds.clear();
        locations
                .subList(Math.max(0, locations.size() - RECENT_IDS), locations.size())
                .forEach(location -> recentIds.add(location.id()));
        recount();
    }

    /** The files rotated: a new current file; files past the last kept are gone. */
    void rotated() {
        if (firstLines.isEmpty()) {
            return;
        }
        while (firstLines.size() > maxRotatedFiles) {
            firstLines.removeLast();
        }
        firstLines.addFirst(0L);
        recount();
    }

    /** A record was appended: a new id counts, a record written again does not. */
    void appended(String id) {
        if (firstLines.isEmpty() || !recentIds.add(id)) {
            return;
        }
        firstLines.set(0, firstLines.getFirst() + 1);
        if (recentIds.size() > RECENT_IDS) {
            recentIds.removeFirst();
        }
        recount();
    }

    private void recount() {
        value = firstLines.isEmpty()
                ? -1
                : firstLines.stream().mapToLong(Long::longValue).sum();
    }

    private int rotatedNumber(Path path) {
        return Integer.parseInt(path.getFileName()
                .toString()
                .substring(file.getFileName().toString().length() + 1));
    }
}
