/* A minimal /bin/sh: `sh -c "prog arg1 arg2"` splits the command on spaces and tabs and
 * execs the program in place (as dash and bash do for a single simple command), looking it
 * up in /bin and / unless the name holds a '/'. Nothing else: no quoting, pipes or
 * variables. Exit status 127 if the program is not found, 2 for a usage error. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

extern char** environ;

enum { kMaxWords = 64 };

static int split(char* command, char** words) {
  int count = 0;
  for (char* cursor = command; *cursor != '\0';) {
    while (*cursor == ' ' || *cursor == '\t' || *cursor == '\n') *cursor++ = '\0';
    if (*cursor == '\0') break;
    if (count == kMaxWords) return -1;
    words[count++] = cursor;
    while (*cursor != '\0' && *cursor != ' ' && *cursor != '\t' && *cursor != '\n') ++cursor;
  }
  words[count] = NULL;
  return count;
}

static void run(char** words) {
  if (strchr(words[0], '/') != NULL) {
    execve(words[0], words, environ);
    return;
  }
  static const char* const kPath[] = {"/bin/", "/"};
  char path[256];
  for (unsigned i = 0; i < sizeof(kPath) / sizeof(kPath[0]); ++i) {
    if (strlen(kPath[i]) + strlen(words[0]) + 1 > sizeof(path)) continue;
    strcpy(path, kPath[i]);
    strcat(path, words[0]);
    execve(path, words, environ);
  }
}

int main(int argc, char** argv) {
  if (argc < 3 || strcmp(argv[1], "-c") != 0) {
    fprintf(stderr, "usage: sh -c \"command [arguments]\"\n");
    return 2;
  }
  char* words[kMaxWords + 1];
  int count = split(argv[2], words);
  if (count < 0) {
    fprintf(stderr, "sh: too many words\n");
    return 2;
  }
  if (count == 0) return 0;
  run(words);
  fprintf(stderr, "sh: %s: not found\n", words[0]);
  return 127;
}
