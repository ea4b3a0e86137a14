package pipeline

// stages is the turn pipeline of spec 5.1, steps 0 to 16, in order. Stages
// whose capability arrives with a later issue are present as named
// pass-through stages so that filling them in does not reshape the pipeline.
var stages = []Stage{
	{Step: "0", Name: "compile_gates", Run: runCompileGates},
	{Step: "0.5", Name: "review_queue", Run: passThrough},
	{Step: "1", Name: "input_gates", Run: runInputGates, Resume: resumeInputGates},
	{Step: "2", Name: "taint", Run: runTaint, Resume: resumeTaint},
	{Step: "3", Name: "chronicle", Run: runChronicle},
	{Step: "3.5", Name: "raw_ingest", Run: runRawIngest},
	{Step: "4", Name: "auto_retrieve", Run: runAutoRetrieve, Resume: resumeMemoryQueries},
	{Step: "5", Name: "token_budget", Run: runTokenBudget, Resume: resumeTokenBudget},
	{Step: "6", Name: "toolset", Run: runToolset, Resume: resumeToolset},
	{Step: "6.5", Name: "skill_toolsets", Run: passThrough},
	{Step: "7", Name: "route", Run: runRoute, Resume: resumeRoute},
	{Step: "8", Name: "output_gates", Run: runOutputGates, Resume: resumeOutputGates},
	{Step: "9", Name: "memory_queries", Run: runMemoryQueries, Resume: resumeMemoryQueries},
	{Step: "10", Name: "memory_ops", Run: runMemoryOps, Resume: resumeMemoryOps},
	{Step: "11", Name: "response_chronicle", Run: runResponseChronicle},
	{Step: "11.5", Name: "raw_output_ingest", Run: runRawOutputIngest},
	{Step: "12", Name: "plan_flow", Run: runPlanFlow, Resume: resumePlanFlow},
	{Step: "13", Name: "send", Run: runSend, Resume: resumeSend},
	{Step: "14", Name: "access_update", Run: runAccessUpdate, Resume: resumeAccessUpdate},
	{Step: "15", Name: "personality_update", Run: runPersonaUpdate, Resume: resumePersonaUpdate},
	{Step: "16", Name: "turn_counter", Run: runTurnCounter},
}

func passThrough(*Turn, *Env) Effect { return next }
