package sessionview

import (
	"errors"
	"fmt"
	"strings"

	"github.com/dshctl/dshctl/internal/ingest"
	"github.com/dshctl/dshctl/internal/inspect"
	"github.com/dshctl/dshctl/internal/seam"
	"github.com/dshctl/dshctl/internal/store"
	"github.com/dshctl/dshctl/internal/termui"
	"github.com/dshctl/dshctl/internal/verify"
)

// Explain words the typed errors of the internal packages (store, inspect)
// for the command line: the message, and a hint where the next step is
// clear; the user's misuse is a termui.UsageError. Other errors pass as
// they are.
func Explain(err error) error {
	var (
		se   *store.Error
		amb  *store.AmbiguousError
		sh   *ingest.ShadowError
		in   *ingest.InputError
		ns   *ingest.NextSeqError
		fe   *inspect.FilterError
		ut   *inspect.UnknownTypesError
		nf   *seam.Error
		near *store.NearError
		oth  *store.OtherStoreError
	)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, store.ErrNoHome):
		return termui.WithHint(errors.New("cannot locate the dsh store: HOME and DSH_HOME are unset; set DSH_HOME or pass --store"),
			"choose a store with --store DIR or DSHCTL_STORE")
	case errors.As(err, &nf) && nf.Kind == seam.ErrNotFound && nf.ID != "" && nf.Err == nil:
		// Whichever operation looked, the user named a session that is
		// not there (seam.md's wording).
		msg := fmt.Errorf("session %q %w", nf.ID, seam.ErrNotFound)
		if errors.As(err, &near) {
			return termui.WithHint(msg, near.Hint())
		}
		return msg
	case errors.As(err, &oth):
		return termui.Usage(termui.WithHint(err, fmt.Sprintf("drop --store to use the store of the path, or name the session by its id in --store %s", oth.Flag)))
	case errors.Is(err, store.ErrEmptyArg):
		return termui.Usagef("empty session argument")
	case errors.Is(err, store.ErrNoBackupDir):
		return termui.WithHint(err, "set XDG_STATE_HOME or HOME: repairs keep what they remove under $XDG_STATE_HOME/dshctl/backups")
	case errors.As(err, &se):
		return explainStore(se)
	case errors.As(err, &amb):
		const show = 10
		msg := fmt.Sprintf("session prefix %q is ambiguous: %d sessions match: %s", amb.Prefix, len(amb.Matches),
			strings.Join(amb.Matches[:min(len(amb.Matches), show)], ", "))
		if len(amb.Matches) > show {
			msg += ", …"
		}
		return termui.WithHint(errors.New(msg), "give more of the id")
	case errors.As(err, &sh):
		return termui.WithHint(err, "give the full id to append to that session, or another id to create a new one")
	case errors.As(err, &in):
		return explainInput(in)
	case errors.As(err, &ns) && ns.Stored > ns.Expected:
		landed := fmt.Sprintf("seqs %d–%d are", ns.Expected, ns.Stored-1)
		if ns.Stored-ns.Expected == 1 {
			landed = fmt.Sprintf("seq %d is", ns.Expected)
		}
		return termui.WithHint(err, fmt.Sprintf("if %s the start of this batch (a killed append to a plain log keeps its complete lines), append the rest with --expect-next-seq %d",
			landed, ns.Stored))
	case errors.As(err, &fe) && fe.Field == "Types":
		return termui.Usagef("--type %q: %v", fe.Pattern, fe.Err)
	case errors.As(err, &fe):
		return termui.Usagef("--from/--to: %v", fe.Err)
	case errors.As(err, &ut):
		return ut.Refusal("read")
	}
	return AddHint(err)
}

// AddHint is err with the next step a user can take, when there is one
// and err has no hint yet: the flag that raises the reader limit a read
// stopped at, the verify that explains a damaged database, the flag a
// repair needs.
func AddHint(err error) error {
	var sq *store.SQLiteOpenError
	var inUse *seam.InUseError
	switch {
	case termui.Hint(err) != "":
	case errors.Is(err, store.ErrRecordLimit):
		return termui.WithHint(err, "to read it, raise the limit with --max-record-bytes: a read holds up to twice the limit in memory")
	case errors.Is(err, store.ErrFrameLimit):
		return termui.WithHint(err, "to read it, raise the limit with --max-frame-bytes")
	case errors.As(err, &sq) && sq.Damaged && termui.Hint(err) == "":
		return termui.WithHint(err, "dshctl verify --store sqlite:"+sq.Path+" lists what is wrong with it")
	case errors.Is(err, verify.ErrTailNotChecked):
		return termui.WithHint(err, "to repair it, raise --max-record-bytes above the record's size (the finding gives it)")
	case errors.As(err, &inUse) && inUse.AnyAccess:
		return termui.WithHint(err, "nothing was written: this system does not say whether that process writes the file or only reads it. "+
			"If it is a dsh, stop it (or let it finish its turn); if it only reads the file (a viewer), close it, "+
			"or use --force when you know no dsh runs the session")
	case errors.As(err, new(*seam.InUseError)):
		return termui.WithHint(err, "nothing was written: dsh 0.1.0 takes no lock, so dshctl must not write while it runs the session. "+
			"Stop dsh (or let it finish its turn) and run the command again; --force writes anyway, only when you know no dsh runs the session")
	case errors.As(err, new(*seam.OverlapError)):
		return termui.WithHint(err, "two writers appended from the same next seq (dsh 0.1.0 takes no lock), and dsh refuses the log. "+
			"With dsh stopped, 'dshctl verify --repair --renumber SESSION' renumbers the log keeping every event ('dshctl verify SESSION' shows the damage)")
	}
	return err
}

func explainStore(se *store.Error) error {
	from := se.Spec.From
	switch se.Kind {
	case store.ErrNotExist:
		return termui.WithHint(fmt.Errorf("store %s (from %s) does not exist", se.Path, from),
			"choose a store with --store DIR or DSHCTL_STORE, or set DSH_HOME")
	case store.ErrNotDir:
		return termui.WithHint(fmt.Errorf("store %s (from %s) is not a directory", se.Path, from),
			"--store takes dsh's sessions folder (a JSONL root), a dsh home, or a SQLite database (sqlite:PATH)")
	case store.ErrNotStore:
		return termui.WithHint(fmt.Errorf("store %s (from %s) is not a dsh session store: it holds no project folders, no sessions folder or database and no session log", se.Path, from),
			"point --store at dsh's sessions folder (~/.dsh/sessions or $DSH_HOME/sessions), the dsh home holding it, or sqlite:PATH")
	case store.ErrProjectFolder:
		return termui.WithHint(fmt.Errorf("store %s (from %s) is a project folder of the store %s, not a store", se.Path, from, se.Store),
			fmt.Sprintf("use --store %s (list --project DIR shows one project's sessions)", se.Store))
	case store.ErrSessionFolder:
		what, alone := "folder", "a session log's folder"
		if se.LogFile {
			what, alone = "log file", "a session log"
		}
		if se.Store == "" {
			return termui.WithHint(fmt.Errorf("store %s (from %s) is %s, not a store", se.Path, from, alone),
				"name the session by its path instead: dshctl stat "+se.Path)
		}
		return termui.WithHint(fmt.Errorf("store %s (from %s) is the %s of session %s in the store %s, not a store", se.Path, from, what, se.ID, se.Store),
			fmt.Sprintf("use --store %s, or name the session by its path: dshctl stat %s", se.Store, se.Path))
	case store.ErrNotEmpty:
		return termui.WithHint(fmt.Errorf("store %s already holds sessions: --compression other than the store's applies only to a new or empty store (%v)", se.Path, se.Err),
			"drop --compression: new sessions take the store's encoding")
	}
	return se
}

func explainInput(in *ingest.InputError) error {
	if in.Line == 0 {
		return fmt.Errorf("read events from %s: %w", in.Name, in.Err)
	}
	var seq *ingest.SeqError
	var long *ingest.LongLineError
	if errors.As(in.Err, &long) {
		return termui.WithHint(fmt.Errorf("%s line %d: the event is longer than --max-record-bytes (%d bytes), the longest record dshctl reads back; nothing was written",
			in.Name, in.Line, long.Limit), "raise --max-record-bytes for this append and for every command that reads the session (a read holds up to twice the limit in memory)")
	}
	if errors.Is(in.Err, ingest.ErrNoSeq) {
		return termui.WithHint(fmt.Errorf("%s line %d: invalid event: it has no seq; nothing was written", in.Name, in.Line),
			"--assign-seq numbers the events from the stored next seq")
	}
	if errors.As(in.Err, &seq) {
		return fmt.Errorf("%s line %d: invalid event: seq %d, expected %d (the stored next seq; --assign-seq numbers events for you); nothing was written",
			in.Name, in.Line, seq.Got, seq.Want)
	}
	return fmt.Errorf("%s line %d: invalid event: %w; nothing was written", in.Name, in.Line, in.Err)
}

// Reason is err as a reason for a session's state: Explain's words, on
// one line as errors are printed.
func Reason(err error) string {
	// The row names the session: the operation and id that a seam error
	// starts with ("list "s": ...") would say it twice.
	if se, ok := err.(*seam.Error); ok {
		err = withoutOp(err, se.Op, se.ID)
	}
	return termui.OneLineError(Explain(err))
}

// withoutOp is err without the operation and id it starts with when it is
// a seam error of operation op on session id, for a line that names them
// already; else err. A session not found keeps them: Explain words it by
// its id.
func withoutOp(err error, op, id string) error {
	se, ok := err.(*seam.Error)
	if !ok || se.Kind == seam.ErrNotFound || se.Op != op || se.ID != id {
		return err
	}
	c := *se
	c.Op, c.ID = "", ""
	return &c
}
