package dev.readygate.restart;

/**
 * An engine start ended (its {@link Stop} recorded): where gateway mode's count of the start's requests in flight at
 * the stop begins ({@link RestartRecords#counted}).
 *
 * @param startId the start that ended
 * @param stop how it ended
 */
public record StartStopped(String startId, Stop stop) {}
