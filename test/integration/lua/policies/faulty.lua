-- A policy with bugs on purpose, selected by job name.
local jobtap = require "jobtap"
jobtap.on ("job.validate", function (job)
    local name = job.name
    if name == "boom" then
        error ("boom")
    elseif name == "nilidx" then
        local t = nil
        return t.x
    elseif name == "loop" then
        while true do end
    elseif name == "pcall-loop" then
        -- catching the budget error does not let a script carry on
        while true do pcall (function () while true do end end) end
    elseif name == "ret" then
        return 42
    elseif name == "exec" then
        os.execute ("true")
    elseif name == "exit" then
        os.exit (1)
    elseif name == "hog" then
        -- one allocation over memory-limit-mb (many small ones would
        -- spend the instruction budget first)
        local s = string.rep ("x", 17 << 20)
    elseif name == "bigcat" then
        -- memory a call makes counts against its instruction budget
        local s = string.rep ("x", 1 << 16)
        while true do local x = s .. s end
    elseif name == "pattern" then
        -- a backtracking search is refused; pcall catches the refusal
        local ok, err = pcall (string.find, string.rep ("a", 30000), ".-.-.-.-b")
        return false, err
    elseif name == "badprio" then
        job:set_priority (-1)
    elseif name == "no" then
        return false, "no, thank you"
    elseif name == "reject" then
        job:reject ("rejected on purpose")
    end
end)
