def s = DFNF ;
  try(split(3) @ innermost(appliedMap)) ;;
  lowerToC
