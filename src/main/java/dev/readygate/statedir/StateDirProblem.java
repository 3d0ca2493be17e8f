package dev.readygate.statedir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystemException;
import java.nio.file.NoSuchFileException;
import java.util.Locale;

/** Why readygate cannot write to its state directory: a closed set of degraded reasons. */
public enum StateDirProblem {
    /** The file system is mounted read-only (EROFS). */
    READ_ONLY,
    /** Permission denied (EACCES, EPERM): the directory belongs to another user, or is not writable. */
    NOT_WRITABLE,
    /** No space left (ENOSPC) or the quota is exhausted (EDQUOT). */
    FULL,
    /** The directory is gone and cannot be created again (its parent is missing, or is not a directory). */
    MISSING,
    /** Another readygate holds the state directory's lock: this one runs read-only. */
    LOCKED,
    /** Another I/O error. */
    IO_ERROR;

    /** The degraded reason, as {@code /status}, logs and metrics name it: {@code state_dir_read_only}, ... */
    public String value() {
        return "state_dir_" + name().toLowerCase(Locale.ROOT);
    }

    /** What a failed write says, from the exception (and its causes) the file system raised. */
    public static StateDirProblem of(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t instanceof UncheckedIOException) {
                continue;
            }
            String message = String.valueOf(
                            t instanceof FileSystemException fs && fs.getReason() != null
                                    ? fs.getReason()
                                    : t.getMessage())
                    .toLowerCase(Locale.ROOT);
            if (message.contains("read-only file system")) {
                return READ_ONLY;
            }
            if (message.contains("no space left") || message.contains("quota exceeded")) {
                return FULL;
            }
            if (t instanceof AccessDeniedException
                    || message.contains("permission denied")
                    || message.contains("operation not permitted")) {
                return NOT_WRITABLE;
            }
            if (t instanceof NoSuchFileException
                    || t instanceof FileAlreadyExistsException
                    || message.contains("not a directory")
                    || message.contains("no such file")) {
                return MISSING;
            }
            if (t instanceof IOException) {
                return IO_ERROR;
            }
        }
        return IO_ERROR;
    }
}
