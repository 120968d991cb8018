from checklist_eval.cli import main

raise SystemExit(main())
