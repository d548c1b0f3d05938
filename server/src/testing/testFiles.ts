/** Test support: real transcript file access that records what is read (not part of the build). */
import { nodeTranscriptFiles, type TranscriptFiles } from '../store/transcriptFiles';

/** One `read` of an open transcript. */
export interface RecordedRead {
  file: string;
  position: number;
  length: number;
}

/** Real file access recording every ranged read and every whole-file read, in order. */
export function recordingFiles(): { files: TranscriptFiles; reads: RecordedRead[]; wholeReads: string[] } {
  const reads: RecordedRead[] = [];
  const wholeReads: string[] = [];
  const files: TranscriptFiles = {
    ...nodeTranscriptFiles,
    async open(file) {
      const handle = await nodeTranscriptFiles.open(file);
      return {
        ...handle,
        read(buffer, offset, length, position) {
          reads.push({ file, position, length });
          return handle.read(buffer, offset, length, position);
        },
        readFile() {
          wholeReads.push(file);
          return handle.readFile();
        },
      };
    },
  };
  return { files, reads, wholeReads };
}
