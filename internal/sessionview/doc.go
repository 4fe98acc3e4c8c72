// Package sessionview is how dshctl shows what its commands found, given a
// termui.Out (where to print, whether for people or scripts, in which
// format): a session the same way in list and stat (its JSON, every field
// present, null when unknown or absent, RFC 3339 times with …Ms twins; its
// row in list's table for people; its tab-separated fields for scripts;
// stat's fields), verify's reports, the ZIPs export wrote, what append did,
// and the log cat prints. Explain words the typed errors of the internal
// packages for people. The command line only picks the view.
package sessionview
