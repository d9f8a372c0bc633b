package cli

// Usage-limit messages name their reset time in a zone ("resets 4:50am
// (Europe/Rome)"). Embedding the zone database (about 450 KB) makes those
// resets parse the same on a machine without /usr/share/zoneinfo, instead
// of silently giving no hint.
import _ "time/tzdata"
